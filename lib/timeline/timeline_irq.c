// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline's interrupt handlers (hard irq, softirq, hrtimer expiry) per
 * CPU, and the timeouts tasks arm (hrtimer_start).
 */
#include "internal/timeline.h"

/*
 * The name of irq @irq, interned: names live as long as the timeline. An
 * irq number may change its name (a shared line gains a handler): the
 * newest name of the number is looked up first and compared. NULL: out of
 * memory (the record fails, as any other that cannot be kept: no "?" that
 * would stand for the name).
 */
static const char *irq_name(struct rsp_timeline *tl, int32_t irq, struct rsp_str s)
{
	const char *name = s.ptr ? s.ptr : "?";
	size_t len = s.ptr ? s.len : 1;
	struct irq_name *n;

	for (uint32_t i = tl->nr_irqs; i-- > 0;)
		if (tl->irqs[i].irq == irq) {
			if (!strncmp(tl->irqs[i].name, name, len) && !tl->irqs[i].name[len])
				return tl->irqs[i].name;
			break;
		}
	if (rsp_vec__reserve((void **)&tl->irqs, &tl->cap_irqs, tl->nr_irqs + 1, sizeof(*n)))
		return NULL;
	n = &tl->irqs[tl->nr_irqs];
	n->irq = irq;
	n->name = strndup(name, len);
	if (!n->name)
		return NULL;
	tl->nr_irqs++;
	return n->name;
}

/* ---- handlers ----------------------------------------------------------- */

/*
 * Handler nesting on a CPU: a softirq runs on the way out of a hard irq,
 * an irq may interrupt a softirq, an hrtimer expires in either; but a
 * handler never nests inside one of its own kind, and a context switch
 * never happens inside one. So an entry of a kind already open, a switch
 * or a gap means that the open handler's exit was lost: its span is
 * emitted with RSP_HSPANF_LOST_EXIT (never measured) and so is every
 * handler nested in it.
 */
static void emit_span(struct rsp_timeline *tl, struct cpu_state *c, const struct handler *h,
		      uint64_t end, uint8_t flags)
{
	struct rsp_handler_span sp;

	memset(&sp, 0, sizeof(sp));
	sp.kind = h->kind;
	sp.flags = flags;
	sp.cpu = (uint32_t)(c - tl->cpus);
	sp.start = h->start;
	sp.end = end < sp.start ? sp.start : end;
	sp.id = h->id;
	sp.wakeups = h->wakeups;
	sp.name = h->name;
	sp.function = h->function;
	if (flags & RSP_HSPANF_LOST_EXIT)
		tl->st.handlers_lost_exit++;
	else
		tl->st.handler_spans++;
	if (tl->ops.handler)
		tl->ops.handler(tl->ctx, &sp);
}

/* The handlers open at depth @from and above lost their exits (given up at @time). */
void tl__abandon_from(struct rsp_timeline *tl, struct cpu_state *c, int from, uint64_t time)
{
	while (c->depth > from) {
		c->depth--;
		emit_span(tl, c, &c->h[c->depth], time, RSP_HSPANF_LOST_EXIT);
	}
	/* The handler the arrival ran in is over: no waking joins it any more, but
	 * the send that delivered it (its tracepoint fires after) may still claim it. */
	if (c->arr_depth > c->depth)
		c->arr_depth = -1;
}

static int find_kind(const struct cpu_state *c, uint8_t kind)
{
	for (int i = c->depth - 1; i >= 0; i--)
		if (c->h[i].kind == kind)
			return i;
	return -1;
}

static void push_handler(struct rsp_timeline *tl, struct cpu_state *c, uint8_t kind, uint32_t id,
			 uint64_t time, const char *name, uint64_t function)
{
	struct handler *h;
	int i;

	/* A handler open for this long lost its exit record. */
	while (c->depth > 0 && time - c->h[c->depth - 1].start > STALE_HANDLER_NS)
		tl__abandon_from(tl, c, c->depth - 1, time);
	i = find_kind(c, kind);
	if (i >= 0)
		tl__abandon_from(tl, c, i, time);
	if (c->depth == NEST_MAX)
		return;
	h = &c->h[c->depth++];
	h->kind = kind;
	h->id = id;
	h->start = time;
	h->name = name;
	h->function = function;
	h->wakeups = 0;
}

static void pop_handler(struct rsp_timeline *tl, struct cpu_state *c, uint8_t kind, uint32_t id,
			uint64_t time)
{
	int i = find_kind(c, kind);

	if (i < 0 || c->h[i].id != id) {
		/* The entry was not seen (or another one's was): this exit is alone. */
		tl->st.handler_exits_alone[kind]++;
		if (i >= 0)
			tl__abandon_from(tl, c, i, time);
		return;
	}
	tl__abandon_from(tl, c, i + 1, time);
	c->depth = i;
	emit_span(tl, c, &c->h[i], time, 0);
	if (c->arr_depth > c->depth)
		c->arr_depth = -1;
}

int tl__on_handler(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	const struct rsp_schema *s = tl->schema;
	union {
		struct rsp_tp_irq_handler_entry ie;
		struct rsp_tp_irq_handler_exit ix;
		struct rsp_tp_softirq_entry se;
		struct rsp_tp_softirq_exit sx;
		struct rsp_tp_hrtimer_expire_entry he;
		struct rsp_tp_hrtimer_expire_exit hx;
	} u;
	uint64_t t = smp->time;

	switch (smp->event) {
	case RSP_EV_irq_handler_entry: {
		const char *name;

		if (rsp_tp__irq_handler_entry(s, smp, &u.ie))
			return -EINVAL;
		name = irq_name(tl, (int32_t)u.ie.irq, u.ie.name);
		if (!name)
			return -ENOMEM;
		push_handler(tl, c, RSP_HANDLER_IRQ, (uint32_t)u.ie.irq, t, name, 0);
		return 0;
	}
	case RSP_EV_irq_handler_exit:
		if (rsp_tp__irq_handler_exit(s, smp, &u.ix))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_IRQ, (uint32_t)u.ix.irq, t);
		return 0;
	case RSP_EV_softirq_entry:
		if (rsp_tp__softirq_entry(s, smp, &u.se))
			return -EINVAL;
		push_handler(tl, c, RSP_HANDLER_SOFTIRQ, (uint32_t)u.se.vec, t,
			     rsp_softirq__name((unsigned)u.se.vec), 0);
		return 0;
	case RSP_EV_softirq_exit:
		if (rsp_tp__softirq_exit(s, smp, &u.sx))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_SOFTIRQ, (uint32_t)u.sx.vec, t);
		return 0;
	case RSP_EV_hrtimer_expire_entry:
		if (rsp_tp__hrtimer_expire_entry(s, smp, &u.he))
			return -EINVAL;
		push_handler(tl, c, RSP_HANDLER_HRTIMER, 0, t, "hrtimer", u.he.function);
		return 0;
	case RSP_EV_hrtimer_expire_exit:
		if (rsp_tp__hrtimer_expire_exit(s, smp, &u.hx))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_HRTIMER, 0, t);
		return 0;
	default:
		return 1;
	}
}

/* Is @fn hrtimer_wakeup, the callback of every sleeper's timeout? Unknown without symbols: yes. */
static bool wakeup_fn(struct rsp_timeline *tl, uint64_t fn)
{
	const struct rsp_ksym *sym;
	unsigned i;

	if (!tl->ks || !fn)
		return true;
	for (i = 0; i < 4; i++)
		if (tl->fn_addr[i] == fn)
			return tl->fn_wakeup[i];
	sym = rsp_ksyms__find(tl->ks, fn, NULL);
	i = tl->fn_next++ % 4;
	tl->fn_addr[i] = fn;
	tl->fn_wakeup[i] = sym && !strcmp(sym->name, "hrtimer_wakeup");
	return tl->fn_wakeup[i];
}

/*
 * A task arms a timer in its own context (poll, epoll_wait, select,
 * nanosleep, futex with a timeout do so just before they sleep). On this
 * kernel the timer's expiry on an idle CPU, and the wakeup it does, are not
 * delivered: the expiry is then the evidence that the timeout ended the
 * sleep (infer_waker).
 */
int tl__on_timer_start(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_tp_hrtimer_start h;
	struct thr *t;

	if (rsp_tp__hrtimer_start(tl->schema, smp, &h))
		return -EINVAL;
	if (!smp->tid || c->depth > 0 || !wakeup_fn(tl, h.function))
		return 0;
	t = tl__find_thr(tl, smp->tid);
	if (t) {
		t->timer_expires = (uint64_t)h.expires;
		t->timer_armed = smp->time;
	}
	return 0;
}
