// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline's block requests: insert -> issue -> complete by device and
 * sector, and the completions inferred from an issuer's wakeup.
 */
#include "internal/timeline.h"

/* ---- block requests ----------------------------------------------------- */

static uint64_t req_key(uint64_t dev, uint64_t sector)
{
	return rsp_hash__key(rsp_hash__mix(sector) ^ dev);
}

static struct req *find_req(struct rsp_timeline *tl, uint32_t dev, uint64_t sector)
{
	uint32_t idx;
	struct req *r;

	if (rsp_u64map__get(&tl->rmap, req_key(dev, sector), &idx))
		return NULL;
	r = &tl->reqs[idx];
	return r->used && r->r.dev == dev && r->r.sector == sector ? r : NULL;
}

static struct req *alloc_req(struct rsp_timeline *tl, uint32_t dev, uint64_t sector)
{
	uint32_t idx;
	struct req *r;

	if (tl->max_reqs && tl->live_reqs >= tl->max_reqs) {
		tl->st.reqs_refused++;
		return NULL;
	}
	if (tl->free_req != UINT32_MAX) {
		idx = tl->free_req;
		tl->free_req = tl->reqs[idx].next_free;
	} else {
		if (rsp_vec__reserve((void **)&tl->reqs, &tl->cap_reqs, tl->nr_reqs + 1,
				     sizeof(*tl->reqs)))
			return NULL;
		idx = tl->nr_reqs++;
	}
	if (rsp_u64map__put(&tl->rmap, req_key(dev, sector), idx)) {
		tl->reqs[idx].used = false;
		tl->reqs[idx].next_free = tl->free_req;
		tl->free_req = idx;
		return NULL;
	}
	r = &tl->reqs[idx];
	memset(r, 0, sizeof(*r));
	r->used = true;
	r->r.id = tl->next_req_id++;
	r->r.dev = dev;
	r->r.sector = sector;
	tl->live_reqs++;
	return r;
}

static void release_req(struct rsp_timeline *tl, struct req *r)
{
	uint32_t idx = (uint32_t)(r - tl->reqs);
	uint32_t cur;

	if (!rsp_u64map__get(&tl->rmap, req_key(r->r.dev, r->r.sector), &cur) && cur == idx)
		rsp_u64map__del(&tl->rmap, req_key(r->r.dev, r->r.sector));
	r->used = false;
	r->next_free = tl->free_req;
	tl->free_req = idx;
	tl->live_reqs--;
}

void tl__emit_req(struct rsp_timeline *tl, struct req *r)
{
	struct thr *t = r->r.tid ? tl__find_thr(tl, r->r.tid) : NULL;

	if (t && t->inflight)
		t->inflight--;
	if (t && r->r.complete) {
		t->last_complete = r->r.complete;
		t->last_complete_dev = r->r.dev;
		t->last_complete_req = r->r.id;
	}
	/*
	 * Named by its issuer's comm now, as the thread's other records are:
	 * the record's own comm field says what the converter or the tracepoint
	 * knew at insert, which live and a dump need not agree on (an exec).
	 */
	if (t && t->comm[0])
		memcpy(r->r.comm, t->comm, sizeof(r->r.comm));
	tl->st.block_reqs++;
	if (r->issued)
		tl->st.reqs_issued_open--;
	if (tl->ops.block)
		tl->ops.block(tl->ctx, &r->r);
	release_req(tl, r);
}

static uint32_t rwbs_flags(struct rsp_str s)
{
	uint32_t f = 0;

	for (uint32_t i = 0; i < s.len; i++) {
		f |= s.ptr[i] == 'W' ? RSP_BLKF_WRITE : 0;
		f |= s.ptr[i] == 'F' ? RSP_BLKF_FLUSH : 0;
		f |= s.ptr[i] == 'S' ? RSP_BLKF_SYNC : 0;
	}
	return f;
}

/* A request whose end was not seen: emitted as such (its issue, if unseen, at its insert). */
static void emit_unseen(struct rsp_timeline *tl, struct req *r)
{
	if (!r->r.issue) {
		r->r.issue = r->r.insert;
		r->r.flags |= RSP_BLKF_ISSUE_ASSUMED;
	}
	r->r.flags |= RSP_BLKF_COMPLETE_NOT_SEEN;
	tl__emit_req(tl, r);
}

/*
 * @t submits a request to @dev right after an I/O sleep whose waking was
 * not seen (this kernel drops samples fired in interrupts on an idle CPU):
 * it slept in the block layer before its request could go -- an io.max
 * throttle, a queue with no free tag -- and what let it go was that
 * device. Named as the sleep's waker, inferred; no request is joined (the
 * one submitted now was not the one it waited for).
 */
static void submitted_after_wait(struct rsp_timeline *tl, struct thr *t, uint32_t dev,
				 uint64_t time)
{
	struct rsp_segment *s = &t->held_sleep;

	if (!t->held || s->waker.kind != RSP_WAKER_NONE || time < t->run_start ||
	    time - t->run_start > JOIN_NS ||
	    (s->reason != RSP_SR_BLOCK_IO && !(t->prev_state & RSP_TASK_UNINTERRUPTIBLE)))
		return;
	s->waker.kind = RSP_WAKER_DEVICE;
	s->waker.id = dev;
	s->waker.req = 0;
	s->flags |= RSP_SEGF_WAKER_INFERRED;
	tl->st.wakers_inferred++;
}

/*
 * A request seen for the first time (at insert, or at issue without
 * insert). Return: 0, 1 if it is not followed (set_max_requests()), or
 * -ENOMEM.
 */
static int new_req(struct rsp_timeline *tl, const struct rsp_sample *smp, uint32_t dev,
		   uint64_t sector, uint32_t nr_sector, uint32_t bytes, struct rsp_str rwbs,
		   struct rsp_str comm)
{
	struct req *r = find_req(tl, dev, sector);
	struct thr *t;

	/* The same sector again while the old one is open: its end was not seen. */
	if (r)
		emit_unseen(tl, r);
	r = alloc_req(tl, dev, sector);
	if (!r)
		return tl->max_reqs && tl->live_reqs >= tl->max_reqs ? 1 : -ENOMEM;
	r->r.nr_sector = nr_sector;
	r->r.bytes = bytes ? bytes : nr_sector * 512;
	r->r.flags = rwbs_flags(rwbs);
	r->r.insert = smp->time;
	r->r.tid = smp->tid;
	r->r.tgid = smp->pid;
	t = smp->tid ? tl__get_thr(tl, smp->tid) : NULL;
	if (comm.ptr)
		memcpy(r->r.comm, comm.ptr, comm.len < 15 ? comm.len : 15);
	else if (t) /* a compact record: the issuer's name came as a COMM record */
		memcpy(r->r.comm, t->comm, 15);
	if (t) {
		tl__learn_tgid(tl, t, smp->pid, smp->time);
		submitted_after_wait(tl, t, dev, smp->time);
		t->inflight++;
		t->last_dev = dev;
		t->last_issue = smp->time;
	}
	tl->last_issue_any = smp->time;
	tl->last_issue_any_dev = dev;
	return 0;
}

int tl__on_insert(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_insert b;

	if (rsp_tp__block_rq_insert(tl->schema, smp, &b))
		return -EINVAL;
	return new_req(tl, smp, (uint32_t)b.dev, b.sector, (uint32_t)b.nr_sector, (uint32_t)b.bytes,
		       b.rwbs, b.comm) < 0
		       ? -ENOMEM
		       : 0;
}

/*
 * A request issued with no insert (a flush, a request that bypassed the
 * scheduler) by a thread that another thread woke just before: issued on
 * that thread's behalf. kblockd issues the flushes of fdatasync() so; the
 * device then waits for the thread that asked, not for kblockd.
 */
static void on_behalf(struct rsp_timeline *tl, struct req *r, const struct rsp_sample *smp)
{
	struct thr *k = smp->tid ? tl__find_thr(tl, smp->tid) : NULL, *t;

	if (!k || k->waker.kind != RSP_WAKER_THREAD || !k->waker.id || k->waker.id == smp->tid ||
	    smp->time < k->waker.time || smp->time - k->waker.time > JOIN_NS)
		return;
	t = tl__find_thr(tl, k->waker.id);
	if (!t)
		return;
	if (k->inflight)
		k->inflight--;
	r->r.tid = t->tid;
	r->r.tgid = t->tgid;
	r->r.flags |= RSP_BLKF_ON_BEHALF;
	t->inflight++;
	t->last_dev = r->r.dev;
	t->last_issue = smp->time;
}

int tl__on_issue(struct rsp_timeline *tl, const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_issue b;
	struct req *r;
	int ret;

	if (rsp_tp__block_rq_issue(tl->schema, smp, &b))
		return -EINVAL;
	r = find_req(tl, (uint32_t)b.dev, b.sector);
	if (r && r->r.issue) {
		/* Issued again: the first one's completion was not seen (flushes all
		 * have sector 0), or a requeue; either way a new request starts. */
		emit_unseen(tl, r);
		r = NULL;
	}
	if (!r) {
		ret = new_req(tl, smp, (uint32_t)b.dev, b.sector, (uint32_t)b.nr_sector,
			      (uint32_t)b.bytes, b.rwbs, b.comm);
		if (ret)
			return ret < 0 ? ret : 0;
		r = find_req(tl, (uint32_t)b.dev, b.sector);
		r->r.flags |= RSP_BLKF_NO_INSERT;
		on_behalf(tl, r, smp);
	}
	r->r.issue = smp->time < r->r.insert ? r->r.insert : smp->time;
	r->r.issue_cpu = smp->cpu;
	r->issued = true;
	tl->st.reqs_issued_open++;
	tl->last_issue_any = smp->time;
	tl->last_issue_any_dev = r->r.dev;
	tl->last_issue_any_idx = (uint32_t)(r - tl->reqs);
	tl->last_issue_any_id = r->r.id;
	return 0;
}

int tl__on_complete(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_tp_block_rq_complete b;
	struct req *r;

	if (rsp_tp__block_rq_complete(tl->schema, smp, &b))
		return -EINVAL;
	r = find_req(tl, (uint32_t)b.dev, b.sector);
	if (!r) {
		/* Not followed (a flush's own completion, at sector -1): still the device's. */
		tl->st.completions_alone++;
		if (c) {
			c->last_complete = smp->time;
			c->last_complete_dev = (uint32_t)b.dev;
			c->last_complete_req = 0;
		}
		return 0;
	}
	if (!r->r.issue) {
		r->r.issue = r->r.insert;
		r->r.flags |= RSP_BLKF_ISSUE_ASSUMED;
	}
	r->r.complete = smp->time < r->r.issue ? r->r.issue : smp->time;
	r->r.complete_cpu = smp->cpu;
	if (c) {
		c->last_complete = r->r.complete;
		c->last_complete_dev = r->r.dev;
		c->last_complete_req = r->r.id;
	}
	tl->last_complete_any = r->r.complete;
	tl->last_complete_any_dev = r->r.dev;
	tl__emit_req(tl, r);
	return 0;
}

/*
 * The issuer woke from its I/O sleep without a completion seen: the
 * requests it issued in the run before it (or that were issued for it
 * until @slept) are done. One from an earlier run still open is not what
 * it waited for: its completion is unknown (merged into another request,
 * or not delivered), as the BPF backend has it too; completed now, it held
 * the disk busy from its issue to now and hid the disk's idle time.
 */
uint64_t tl__infer_completions(struct rsp_timeline *tl, struct thr *t, uint64_t slept, uint64_t now)
{
	uint64_t req = 0;

	for (uint32_t i = 0; i < tl->nr_reqs; i++) {
		struct req *r = &tl->reqs[i];

		if (!r->used || r->r.tid != t->tid || r->r.insert > slept ||
		    r->r.insert < t->run_start)
			continue;
		if (!r->r.issue) {
			r->r.issue = r->r.insert;
			r->r.flags |= RSP_BLKF_ISSUE_ASSUMED;
		}
		r->r.complete = now < r->r.issue ? r->r.issue : now;
		r->r.flags |= RSP_BLKF_COMPLETE_INFERRED;
		if (r->r.id > req)
			req = r->r.id;
		tl__emit_req(tl, r);
	}
	return req;
}

/*
 * A request issued by another context while @t slept (a flush that kblockd
 * issued for it), still open: it completed before @t woke. Returns its id.
 */
uint64_t tl__infer_on_behalf(struct rsp_timeline *tl, const struct thr *t, uint64_t now)
{
	struct req *r;

	if (tl->last_issue_any < t->since || tl->last_issue_any_idx >= tl->nr_reqs)
		return 0;
	r = &tl->reqs[tl->last_issue_any_idx];
	if (!r->used || r->r.id != tl->last_issue_any_id)
		return 0;
	r->r.complete = now < r->r.issue ? r->r.issue : now;
	r->r.flags |= RSP_BLKF_COMPLETE_INFERRED;
	tl__emit_req(tl, r);
	return tl->last_issue_any_id;
}

/*
 * Thread @relay wakes @t at @time, asleep on block I/O with requests it
 * issued before it slept in flight and none seen completing: @relay passes
 * on their completion (ext4's end-of-I/O work in a kworker ending the
 * writeback that fdatasync() waits for). The completion came in an
 * interrupt on an idle CPU, which this kernel does not deliver: the
 * requests were done by the time @relay woke @t (the BPF backend sees
 * them end there; left open, the disk's idle time after them was lost).
 *
 * If @relay's own waking was not seen either and this is early in its
 * run, the same interrupt woke it: the BPF backend names the device as
 * its waker, and the wait-for graph then gives @t's wait to the device,
 * not to the relay. Inferred so here: else @t waits for a kworker, and the
 * knot {@t, disk} has an edge out.
 */
void tl__relayed_completion(struct rsp_timeline *tl, uint32_t relay, struct thr *t, uint64_t time)
{
	struct thr *k = tl__find_thr(tl, relay);
	struct rsp_segment *s;
	bool woken_by_it;
	uint64_t req;

	/* its stack says block I/O, or it has none that says otherwise and left in D state */
	bool io = t->reason == RSP_SR_BLOCK_IO || t->reason == RSP_SR_PAGE_FAULT ||
		  (t->reason == RSP_SR_UNKNOWN && (t->prev_state & RSP_TASK_UNINTERRUPTIBLE));

	if (!k || k == t || !io || !t->inflight || t->last_complete >= t->since)
		return;
	s = &k->held_sleep;
	woken_by_it = k->held && s->waker.kind == RSP_WAKER_NONE &&
		      (s->flags & RSP_SEGF_WAKING_NOT_SEEN) && time >= k->run_start &&
		      time - k->run_start <= JOIN_NS;
	req = tl__infer_completions(tl, t, t->since, woken_by_it ? k->run_start : time);
	if (!woken_by_it || !req)
		return;
	s->waker.kind = RSP_WAKER_DEVICE;
	s->waker.id = t->last_dev;
	s->waker.req = req;
	s->flags |= RSP_SEGF_WAKER_INFERRED;
	tl->st.wakers_inferred++;
}

/* Requests issued (or inserted) before @before that saw no completion (rsp_timeline__expire()). */
void tl__expire_reqs(struct rsp_timeline *tl, uint64_t before)
{
	for (uint32_t i = 0; i < tl->nr_reqs; i++) {
		struct req *r = &tl->reqs[i];

		if (!r->used || (r->r.issue ? r->r.issue : r->r.insert) >= before)
			continue;
		tl->st.reqs_expired++;
		emit_unseen(tl, r);
	}
}

/* Requests still open at rsp_timeline__finish(). */
void tl__finish_reqs(struct rsp_timeline *tl)
{
	for (uint32_t i = 0; i < tl->nr_reqs; i++)
		if (tl->reqs[i].used)
			emit_unseen(tl, &tl->reqs[i]);
}

void rsp_timeline__set_max_requests(struct rsp_timeline *tl, uint32_t max)
{
	tl->max_reqs = max;
}

void rsp_timeline__open_requests(const struct rsp_timeline *tl,
				 void (*fn)(void *ctx, const struct rsp_block_req *r), void *ctx)
{
	for (uint32_t i = 0; i < tl->nr_reqs; i++)
		if (tl->reqs[i].used)
			fn(ctx, &tl->reqs[i].r);
}
