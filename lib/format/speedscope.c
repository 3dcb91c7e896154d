// SPDX-License-Identifier: LGPL-2.1
/*
 * speedscope's file format: see internal/speedscope.h. Hand-written
 * because it is a few JSON arrays: jansson (which rsp links) would hold
 * the whole tree of a 100k-event file in memory as objects first.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal/hash.h"
#include "internal/json.h"
#include "internal/speedscope.h"
#include "internal/vec.h"

void rsp_sscope__init(struct rsp_sscope *w)
{
	memset(w, 0, sizeof(*w));
	rsp_u64map__init(&w->byname);
}

void rsp_sscope__exit(struct rsp_sscope *w)
{
	for (size_t i = 0; i < w->nr_frames; i++)
		free(w->names[i]);
	free(w->names);
	rsp_u64map__exit(&w->byname);
	rsp_buf__exit(&w->frames);
	rsp_buf__exit(&w->profiles);
	rsp_buf__exit(&w->samples);
	rsp_buf__exit(&w->weights);
}

static int check(struct rsp_sscope *w, const struct rsp_buf *b)
{
	if (!w->err && b->error)
		w->err = b->error;
	return w->err;
}

int rsp_sscope__frame(struct rsp_sscope *w, const char *name)
{
	uint64_t h = rsp_hash__key(rsp_hash__bytes(RSP_HASH_INIT, name, strlen(name)));
	uint32_t i;
	char *copy;

	if (w->err)
		return w->err;
	if (!rsp_u64map__get(&w->byname, h, &i) && !strcmp(w->names[i], name))
		return (int)i;
	/* new, or a hash collision: a frame of its own (found by the first only) */
	copy = strdup(name);
	if (!copy || w->nr_frames >= INT32_MAX ||
	    rsp_vec__reserve((void **)&w->names, &w->cap_names, w->nr_frames + 1,
			     sizeof(*w->names))) {
		free(copy);
		return w->err = -ENOMEM;
	}
	i = (uint32_t)w->nr_frames++;
	w->names[i] = copy; /* the writer owns it from here, whatever fails next */
	if (rsp_u64map__get(&w->byname, h, &(uint32_t){0}) && rsp_u64map__put(&w->byname, h, i))
		return w->err = -ENOMEM;
	rsp_buf__puts(&w->frames, i ? ",\n{\"name\":" : "\n{\"name\":");
	rsp_json__str(&w->frames, name);
	rsp_buf__puts(&w->frames, "}");
	if (check(w, &w->frames))
		return w->err;
	return (int)i;
}

/* End the open profile, if any. */
static void close_profile(struct rsp_sscope *w)
{
	if (w->open == 'E') {
		rsp_buf__puts(&w->profiles, "]}");
	} else if (w->open == 'S') {
		rsp_buf__add(&w->profiles, w->samples.data ? w->samples.data : "", w->samples.len);
		rsp_buf__puts(&w->profiles, "],\"weights\":[");
		rsp_buf__add(&w->profiles, w->weights.data ? w->weights.data : "", w->weights.len);
		rsp_buf__puts(&w->profiles, "]}");
		check(w, &w->samples);
		check(w, &w->weights);
		rsp_buf__reset(&w->samples);
		rsp_buf__reset(&w->weights);
	}
	w->open = 0;
	check(w, &w->profiles);
}

static void begin(struct rsp_sscope *w, const char *type, const char *name, const char *unit,
		  uint64_t start, uint64_t end)
{
	close_profile(w);
	if (w->err)
		return;
	rsp_buf__printf(&w->profiles, "%s\n{\"type\":\"%s\",\"name\":", w->nr_profiles ? "," : "",
			type);
	rsp_json__str(&w->profiles, name);
	rsp_buf__printf(&w->profiles, ",\"unit\":\"%s\",\"startValue\":%llu,\"endValue\":%llu,",
			unit, (unsigned long long)start,
			(unsigned long long)(end > start ? end : start));
	w->nr_profiles++;
	w->nr_events = w->nr_samples = 0;
}

void rsp_sscope__evented(struct rsp_sscope *w, const char *name, const char *unit, uint64_t start,
			 uint64_t end)
{
	begin(w, "evented", name, unit, start, end);
	rsp_buf__puts(&w->profiles, "\"events\":[");
	w->open = check(w, &w->profiles) ? 0 : 'E';
}

void rsp_sscope__sampled(struct rsp_sscope *w, const char *name, const char *unit, uint64_t start,
			 uint64_t end)
{
	begin(w, "sampled", name, unit, start, end);
	rsp_buf__puts(&w->profiles, "\"samples\":[");
	w->open = check(w, &w->profiles) ? 0 : 'S';
}

void rsp_sscope__event(struct rsp_sscope *w, char type, int frame, uint64_t at)
{
	if (w->err || w->open != 'E' || frame < 0)
		return;
	rsp_buf__printf(&w->profiles, "%s{\"type\":\"%c\",\"frame\":%d,\"at\":%llu}",
			w->nr_events++ ? ",\n" : "\n", type, frame, (unsigned long long)at);
	check(w, &w->profiles);
}

void rsp_sscope__sample(struct rsp_sscope *w, const int *frames, size_t n, uint64_t weight)
{
	if (w->err || w->open != 'S')
		return;
	rsp_buf__puts(&w->samples, w->nr_samples ? ",\n[" : "\n[");
	for (size_t i = 0; i < n; i++)
		rsp_buf__printf(&w->samples, "%s%d", i ? "," : "", frames[i]);
	rsp_buf__puts(&w->samples, "]");
	rsp_buf__printf(&w->weights, "%s%llu", w->nr_samples++ ? "," : "",
			(unsigned long long)weight);
	check(w, &w->samples);
	check(w, &w->weights);
}

int rsp_sscope__finish(struct rsp_sscope *w, const char *name, struct rsp_buf *out)
{
	int ret;

	close_profile(w);
	if (!w->err) {
		rsp_buf__puts(out, "{\"$schema\":\"https://www.speedscope.app/"
				   "file-format-schema.json\",\n\"exporter\":\"rsp\",\"name\":");
		rsp_json__str(out, name);
		rsp_buf__puts(out, ",\"activeProfileIndex\":0,\n\"shared\":{\"frames\":[");
		rsp_buf__add(out, w->frames.data ? w->frames.data : "", w->frames.len);
		rsp_buf__puts(out, "]},\n\"profiles\":[");
		rsp_buf__add(out, w->profiles.data ? w->profiles.data : "", w->profiles.len);
		rsp_buf__puts(out, "\n]}\n");
		check(w, out);
	}
	ret = w->err;
	rsp_sscope__exit(w);
	return ret;
}
