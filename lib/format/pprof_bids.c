// SPDX-License-Identifier: LGPL-2.1
/*
 * The build-ids of a pprof profile's user objects (internal/pprof.h:
 * struct rsp_pprof_bids), looked up once per object: what pprof's readers
 * match debug files and symbol servers by.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <rsp/maps.h>
#include "internal/elfsyms.h"
#include "internal/pprof.h"
#include "internal/vec.h"

void rsp_pprof_bids__init(struct rsp_pprof_bids *b, const struct rsp_maps *maps)
{
	memset(b, 0, sizeof(*b));
	b->maps = maps;
	rsp_u64map__init(&b->of);
}

void rsp_pprof_bids__exit(struct rsp_pprof_bids *b)
{
	free(b->ids);
	rsp_u64map__exit(&b->of);
}

/*
 * The build-id of @object: the one the process model recorded for the
 * mapping at @addr, else the one of the file the symbols were read from
 * (the symbolizer checked it against the mapping's when it had one).
 */
static void read_build_id(struct rsp_pprof_bids *b, uint32_t pid, uint64_t time, const char *object,
			  uint64_t addr, struct rsp_pprof_bid *out)
{
	struct rsp_map_view v;
	int fd, n;

	if (b->maps && !rsp_maps__find(b->maps, pid, time, addr, &v) && v.build_id_size) {
		out->n = v.build_id_size > 20 ? 20 : v.build_id_size;
		memcpy(out->id, v.build_id, out->n);
		return;
	}
	if (object[0] != '/')
		return;
	fd = open(object, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return;
	n = rsp_elfsyms__build_id_fd(fd, out->id);
	close(fd);
	out->n = n > 0 ? (uint8_t)n : 0;
}

void rsp_pprof_bids__frame(struct rsp_pprof_bids *b, uint32_t pid, uint64_t time, bool user,
			   struct rsp_pprof_frame *f)
{
	uint32_t i;

	if (b->err || !user || !f->object || !f->addr)
		return;
	if (rsp_u64map__get(&b->of, (uintptr_t)f->object, &i)) {
		/* ENOMEM fails the profile: a build-id left out would go unsaid */
		if (rsp_vec__reserve((void **)&b->ids, &b->cap, b->n + 1, sizeof(*b->ids))) {
			b->err = -ENOMEM;
			return;
		}
		i = (uint32_t)b->n;
		memset(&b->ids[i], 0, sizeof(b->ids[i]));
		read_build_id(b, pid, time, f->object, f->addr, &b->ids[i]);
		if (rsp_u64map__put(&b->of, (uintptr_t)f->object, i)) {
			b->err = -ENOMEM;
			return;
		}
		b->n++;
	}
	f->build_id = b->ids[i].n ? b->ids[i].id : NULL;
	f->build_id_size = b->ids[i].n;
}
