/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_INTERNAL_MAPS_H
#define RSP_INTERNAL_MAPS_H

#include <rsp/maps.h>

/*
 * A mapped object (a file, the vdso, anonymous memory), shared by every
 * region that maps it; freed with its last region. The symbolizer keeps a
 * memo in it (sym_obj, valid while sym_epoch matches the symbolizer's
 * eviction epoch) so that an address finds its symbol table without
 * hashing the object's identity again.
 */
enum rsp_dso_type {
	RSP_DSO_FILE,
	RSP_DSO_ANON, /* no file: JIT code or an unnamed executable region */
	RSP_DSO_VDSO,
	RSP_DSO_SPECIAL, /* [vsyscall], [stack], ... */
};

struct rsp_dso {
	struct rsp_dso *hnext;
	uint64_t hash;
	uint32_t refs;
	uint8_t type; /* enum rsp_dso_type */
	bool deleted;
	uint8_t build_id_size;
	uint8_t build_id[20];
	uint32_t maj, min;
	uint64_t ino, ino_generation;
	void *sym_obj; /* symbolizer memo */
	uint64_t sym_epoch;
	size_t path_len;
	char path[]; /* without " (deleted)" */
};

#endif
