// SPDX-License-Identifier: GPL-2.0
/*
 * The reload thread (reload.h): it waits for a request, reads the file with
 * rspd_config__read() into its own scratch configuration, then hands the
 * result over under the lock and wakes the capture loop through an eventfd.
 * A request that comes while a read is under way is served by reading the
 * file again afterwards: the last SIGHUP always sees the last file.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include "clock.h"
#include "log.h"
#include "reload.h"

struct rspd_reload {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int efd;
	bool wanted; /* a request not yet served */
	bool busy;   /* the thread is reading the file */
	bool stop;
	bool done;	     /* a result waits for __take() */
	bool overdue_said;   /* __overdue() said so for this read */
	uint64_t busy_since; /* CLOCK_MONOTONIC ns */
	int result;
	char err[1024];
	struct rspd_config next;    /* the result, under the lock */
	struct rspd_config scratch; /* the thread's own */
	char scratch_err[1024];
};

/* The lock held: the result of a read for __take(), and the loop woken. */
static void hand_over(struct rspd_reload *r, int ret)
{
	uint64_t one = 1;

	r->result = ret;
	if (ret)
		memcpy(r->err, r->scratch_err, sizeof(r->err));
	else
		memcpy(&r->next, &r->scratch, sizeof(r->next));
	r->done = true;
	if (write(r->efd, &one, sizeof(one)) < 0)
		rspd_log__errno(RSP_LOG_WARN, "reload: waking the capture loop");
}

static void *reload_main(void *arg)
{
	struct rspd_reload *r = arg;
	int ret;

	pthread_setname_np(pthread_self(), "rspd-reload");

	pthread_mutex_lock(&r->lock);
	while (!r->stop) {
		if (!r->wanted) {
			pthread_cond_wait(&r->cond, &r->lock);
			continue;
		}
		r->wanted = false;
		r->busy = true;
		r->busy_since = rspd_clock__now_ns();
		r->overdue_said = false;
		pthread_mutex_unlock(&r->lock);
		ret = rspd_config__read(&r->scratch, r->scratch_err, sizeof(r->scratch_err));
		pthread_mutex_lock(&r->lock);
		r->busy = false;
		if (!r->stop)
			hand_over(r, ret);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

static void reload_free(struct rspd_reload *r)
{
	if (r->efd >= 0)
		close(r->efd);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}

struct rspd_reload *rspd_reload__new(void)
{
	struct rspd_reload *r = calloc(1, sizeof(*r));
	int ret;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->efd < 0) {
		reload_free(r);
		return NULL;
	}
	ret = pthread_create(&r->thread, NULL, reload_main, r);
	if (ret) {
		reload_free(r);
		errno = ret;
		return NULL;
	}
	return r;
}

void rspd_reload__delete(struct rspd_reload *r)
{
	bool busy;

	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	busy = r->busy;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (busy) {
		/* Reading a file that does not answer: exit does not wait for it. */
		pthread_detach(r->thread);
		return;
	}
	pthread_join(r->thread, NULL);
	reload_free(r);
}

int rspd_reload__fd(const struct rspd_reload *r)
{
	return r->efd;
}

void rspd_reload__request(struct rspd_reload *r, uint64_t *busy_ns)
{
	pthread_mutex_lock(&r->lock);
	*busy_ns = r->busy ? rspd_clock__now_ns() - r->busy_since : 0;
	r->wanted = true;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

int rspd_reload__take(struct rspd_reload *r, struct rspd_config *cfg, char *err, size_t errlen)
{
	uint64_t cnt;
	int ret = 0;

	if (read(r->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		return 0;
	pthread_mutex_lock(&r->lock);
	if (r->done) {
		r->done = false;
		ret = r->result ? -1 : 1;
		if (ret < 0)
			snprintf(err, errlen, "%s", r->err);
		else
			rspd_config__apply(cfg, &r->next);
	}
	pthread_mutex_unlock(&r->lock);
	return ret;
}

bool rspd_reload__overdue(struct rspd_reload *r, uint64_t limit_ns)
{
	bool said = false;

	pthread_mutex_lock(&r->lock);
	if (r->busy && !r->overdue_said && rspd_clock__now_ns() - r->busy_since > limit_ns) {
		r->overdue_said = true;
		said = true;
	}
	pthread_mutex_unlock(&r->lock);
	return said;
}
