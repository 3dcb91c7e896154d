/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_SW_RENDER_H
#define RSP_SW_RENDER_H

/*
 * Stopwatches rendered for `rspctl stopwatch list` and `show`, text or JSON
 * (lib/format/sw_render.c): the format layer, beside the hist renderer
 * whose table and peaks they show.
 */
#include <stdbool.h>
#include <stddef.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/stopwatch.h>

/**
 * rsp_sw__render_list() - `stopwatch list`: @n views, text or JSON into @out.
 * @max: the bound (--stopwatch-max). Return: 0 or -ENOMEM.
 */
RSP_API int rsp_sw__render_list(const struct rsp_sw_view *v, size_t n, unsigned max, bool json,
				struct rsp_buf *out);
/**
 * rsp_sw__render_show() - `stopwatch show`: each view's statistics and
 * log2 histogram with peaks (the hist renderer's), text or JSON.
 */
RSP_API int rsp_sw__render_show(const struct rsp_sw_view *v, size_t n, bool json,
				struct rsp_buf *out);

#endif /* RSP_SW_RENDER_H */
