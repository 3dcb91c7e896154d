/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_MAPPED_H
#define RSP_MAPPED_H

/*
 * Memory librsp maps itself rather than mallocs: the timeline store's
 * segment vectors past 64 KiB (lib/timeline/tlstore.c: grown by mremap(),
 * never copied). rspd counts a query's memory at malloc (daemon/malloc.c);
 * these mappings would escape that count, so librsp tells a hook the
 * application sets of every growth and release. Without a hook nothing is
 * counted and every growth is allowed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <rsp/api.h>

/*
 * @delta bytes more (> 0: return false to refuse the growth, which then
 * fails as an allocation would) or fewer (< 0: the return is ignored), on
 * the thread that maps or unmaps.
 */
typedef bool (*rsp_mapped_hook)(int64_t delta);

/** rsp_mapped__set_hook() - set (or, NULL, clear) the hook; before any thread maps. */
RSP_API void rsp_mapped__set_hook(rsp_mapped_hook hook);

/** rsp_mapped__charge() - tell the hook; true when allowed (no hook: always). */
RSP_API bool rsp_mapped__charge(int64_t delta);

#endif /* RSP_MAPPED_H */
