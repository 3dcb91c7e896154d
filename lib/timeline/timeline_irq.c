// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline's interrupt handlers (hard irq, softirq, hrtimer expiry) per
 * CPU, and the timeouts tasks arm (hrtimer_start).
 */
#include "internal/timeline.h"

static const char *irq_name(struct rsp_timeline *tl, int32_t irq, struct rsp_str s)
{
	struct irq_name *n;

	for (uint32_t i = 0; i < tl->nr_irqs; i++)
		if (tl->irqs[i].irq == irq)
			return tl->irqs[i].name;
	n = realloc(tl->irqs, (tl->nr_irqs + 1) * sizeof(*n));
	if (!n)
		return "?";
	tl->irqs = n;
	n = &tl->irqs[tl->nr_irqs];
	n->irq = irq;
	n->name = strndup(s.ptr ? s.ptr : "?", s.ptr ? s.len : 1);
	if (!n->name)
		return "?";
	tl->nr_irqs++;
	return n->name;
}

/* ---- handlers ----------------------------------------------------------- */

static void push_handler(struct cpu_state *c, uint8_t kind, uint32_t id, uint64_t time,
			 const char *name, uint64_t function)
{
	struct handler *h;

	/* A handler open for this long lost its exit record: forget it. */
	while (c->depth > 0 && time - c->h[c->depth - 1].start > STALE_HANDLER_NS)
		c->depth--;
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
			uint64_t time, uint32_t cpu)
{
	struct rsp_handler_span sp;
	int i;

	for (i = c->depth - 1; i >= 0; i--)
		if (c->h[i].kind == kind && c->h[i].id == id)
			break;
	if (i < 0)
		return; /* the entry was not seen */
	memset(&sp, 0, sizeof(sp));
	sp.kind = kind;
	sp.cpu = cpu;
	sp.start = c->h[i].start;
	sp.end = time < sp.start ? sp.start : time;
	sp.id = id;
	sp.wakeups = c->h[i].wakeups;
	sp.name = c->h[i].name;
	sp.function = c->h[i].function;
	c->depth = i;
	/* The handler the arrival ran in is over: no waking joins it any more, but
	 * the send that delivered it (its tracepoint fires after) may still claim it. */
	if (c->arr_depth > c->depth)
		c->arr_depth = -1;
	tl->st.handler_spans++;
	if (tl->ops.handler)
		tl->ops.handler(tl->ctx, &sp);
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
	case RSP_EV_irq_handler_entry:
		if (rsp_tp__irq_handler_entry(s, smp, &u.ie))
			return -EINVAL;
		push_handler(c, RSP_HANDLER_IRQ, (uint32_t)u.ie.irq, t,
			     irq_name(tl, (int32_t)u.ie.irq, u.ie.name), 0);
		return 0;
	case RSP_EV_irq_handler_exit:
		if (rsp_tp__irq_handler_exit(s, smp, &u.ix))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_IRQ, (uint32_t)u.ix.irq, t, smp->cpu);
		return 0;
	case RSP_EV_softirq_entry:
		if (rsp_tp__softirq_entry(s, smp, &u.se))
			return -EINVAL;
		push_handler(c, RSP_HANDLER_SOFTIRQ, (uint32_t)u.se.vec, t,
			     rsp_softirq__name((unsigned)u.se.vec), 0);
		return 0;
	case RSP_EV_softirq_exit:
		if (rsp_tp__softirq_exit(s, smp, &u.sx))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_SOFTIRQ, (uint32_t)u.sx.vec, t, smp->cpu);
		return 0;
	case RSP_EV_hrtimer_expire_entry:
		if (rsp_tp__hrtimer_expire_entry(s, smp, &u.he))
			return -EINVAL;
		push_handler(c, RSP_HANDLER_HRTIMER, 0, t, "hrtimer", u.he.function);
		return 0;
	case RSP_EV_hrtimer_expire_exit:
		if (rsp_tp__hrtimer_expire_exit(s, smp, &u.hx))
			return -EINVAL;
		pop_handler(tl, c, RSP_HANDLER_HRTIMER, 0, t, smp->cpu);
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
