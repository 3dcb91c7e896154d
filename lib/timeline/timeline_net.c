// SPDX-License-Identifier: LGPL-2.1
/*
 * The timeline's sockets and network operations (see struct rsp_net_op):
 * sends, data arrivals, socket addresses, and who answered.
 */
#include "internal/timeline.h"

/* ---- sockets and network operations ------------------------------------ */

static struct sock_st *find_sock(struct rsp_timeline *tl, uint64_t sk)
{
	uint32_t idx;

	if (!sk || rsp_u64map__get(&tl->smap, sk, &idx))
		return NULL;
	return &tl->socks[idx];
}

static struct sock_st *get_sock(struct rsp_timeline *tl, uint64_t sk)
{
	struct sock_st *so = find_sock(tl, sk);
	uint32_t idx;

	if (so || !sk)
		return so;
	if (tl->free_sock != UINT32_MAX) {
		idx = tl->free_sock;
		tl->free_sock = tl->socks[idx].next_free;
	} else {
		if (rsp_vec__reserve((void **)&tl->socks, &tl->cap_socks, tl->nr_socks + 1,
				     sizeof(*tl->socks)))
			return NULL;
		idx = tl->nr_socks++;
	}
	if (rsp_u64map__put(&tl->smap, sk, idx)) {
		tl->socks[idx].used = false;
		tl->socks[idx].next_free = tl->free_sock;
		tl->free_sock = idx;
		return NULL;
	}
	so = &tl->socks[idx];
	memset(so, 0, sizeof(*so));
	so->sk = sk;
	so->used = true;
	tl->st.sockets++;
	return so;
}

static void free_sock(struct rsp_timeline *tl, struct sock_st *so)
{
	uint32_t idx = (uint32_t)(so - tl->socks);

	rsp_u64map__del(&tl->smap, so->sk);
	so->used = false;
	so->next_free = tl->free_sock;
	tl->free_sock = idx;
}

/* What the stream (or, failing that, the base table) says @sk was at @time. */
static int sock_info(const struct rsp_timeline *tl, uint64_t sk, uint64_t time,
		     struct rsp_sock_info *si)
{
	if (!rsp_socktab__find(tl->stab, sk, time, si))
		return 0;
	return rsp_socktab__find(tl->base, sk, time, si);
}

/* Its addresses say the traffic stays on this machine. */
static bool sock_is_local(const struct rsp_timeline *tl, uint64_t sk, uint64_t time)
{
	struct rsp_sock_info si;

	if (sock_info(tl, sk, time, &si) || !si.remote.family)
		return false;
	return rsp_sockaddr__is_loopback(&si.remote) ||
	       (si.remote.family == si.local.family &&
		!memcmp(si.remote.addr, si.local.addr, sizeof(si.local.addr)));
}

void tl__emit_op(struct rsp_timeline *tl, struct sock_st *so, uint32_t flags)
{
	struct rsp_net_op op;
	struct rsp_sock_info si, peer;

	if (so->send && so->arrivals) {
		memset(&op, 0, sizeof(op));
		op.id = tl->next_op_id++;
		op.sk = so->sk;
		op.tid = so->tid;
		op.tgid = so->tgid;
		op.proto = so->proto;
		op.family = so->family;
		op.flags = flags | (so->loopback ? RSP_NETF_LOOPBACK : 0) |
			   (sock_is_local(tl, so->sk, so->send) ? RSP_NETF_LOCAL : 0);
		op.start = so->send;
		op.first = so->first;
		op.end = so->last;
		op.arrivals = so->arrivals;
		op.wakeups = so->wakeups;
		op.peer_tid = so->loopback ? so->peer_tid : 0;
		op.peer_tgid = so->loopback ? so->peer_tgid : 0;
		op.peer_sk = so->loopback ? so->peer_sk : 0;
		op.bytes_sent = so->bytes_sent;
		if (!sock_info(tl, so->sk, so->send, &si) && si.local.family) {
			op.local = si.local;
			op.remote = si.remote;
			op.flags |= RSP_NETF_TUPLE;
			if (!op.proto)
				op.proto = si.proto;
		} else if (op.peer_sk && !sock_info(tl, op.peer_sk, so->last, &peer) &&
			   peer.local.family) {
			/* An unconnected socket: it talked to the peer socket's address. */
			op.remote = peer.local;
			op.flags |= RSP_NETF_REMOTE_PEER;
		}
		tl->st.net_ops++;
		if (tl->ops.net)
			tl->ops.net(tl->ctx, &op);
	}
	so->send = 0;
	so->bytes_sent = 0;
	so->first = so->last = 0;
	so->arrivals = so->wakeups = 0;
	so->loopback = false;
	so->peer_tid = so->peer_tgid = 0;
	so->peer_sk = 0;
}

static bool is_ksoftirqd(const struct thr *t)
{
	return !strncmp(t->comm, "ksoftirqd/", 10);
}

/* The arrival @c holds was delivered by @peer's send on @peer_sk (loopback). */
static void loopback_peer(struct rsp_timeline *tl, struct cpu_state *c, uint32_t tid, uint32_t tgid,
			  uint64_t peer_sk)
{
	struct sock_st *so = find_sock(tl, c->arr_sk);

	if (!so || so->sk == peer_sk)
		return;
	so->loopback = true;
	so->peer_tid = tid;
	so->peer_tgid = tgid;
	if (peer_sk)
		so->peer_sk = peer_sk;
}

static void on_send(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		    const struct rsp_net_event *ev, struct sock_st *so)
{
	struct thr *t = smp->tid ? tl__find_thr(tl, smp->tid) : NULL;
	bool kprobe = rsp_catalogue__event(smp->event)->kind == RSP_EVK_KPROBE;

	/*
	 * The send tracepoint fires when the send returns: an arrival on this
	 * CPU earlier in the same run, in this task's context, came from this
	 * send (loopback delivers in the sender's softirq).
	 */
	if (c->arr_sk && smp->tid && c->arr_tid == smp->tid && t && c->arr_time >= t->run_start) {
		loopback_peer(tl, c, smp->tid, smp->pid, ev->sk);
		c->arr_sk = 0;
	}
	if (kprobe && t) {
		/* The kprobe fires when the send starts: arrivals until the run ends are its. */
		t->kp_send_time = smp->time;
		t->kp_send_sk = ev->sk;
	}
	if (so->arrivals)
		tl__emit_op(tl, so, 0);
	so->tid = smp->tid;
	so->tgid = smp->pid;
	so->send = smp->time;
	if (ev->bytes > 0)
		so->bytes_sent += (uint64_t)ev->bytes;
}

static void on_arrival(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp,
		       const struct rsp_net_event *ev, struct sock_st *so)
{
	struct thr *t = smp->tid ? tl__find_thr(tl, smp->tid) : NULL;

	if (so->send) {
		if (!so->arrivals)
			so->first = smp->time;
		so->arrivals++;
		so->last = smp->time;
	}
	so->loopback = false;
	so->peer_tid = so->peer_tgid = 0;
	so->peer_sk = 0;
	c->arr_sk = ev->sk;
	c->arr_time = smp->time;
	c->arr_tid = smp->tid;
	c->arr_depth = c->depth;
	/* A kprobe send entered in this run delivered it. */
	if (t && t->kp_send_time && t->kp_send_time >= t->run_start)
		loopback_peer(tl, c, smp->tid, smp->pid, t->kp_send_sk);
}

static int on_state(struct rsp_timeline *tl, const struct rsp_sample *smp,
		    const struct rsp_net_event *ev)
{
	struct rsp_sock_info si = {.sk = ev->sk,
				   .proto = ev->proto,
				   .state = (uint8_t)ev->newstate,
				   .source = RSP_SOCK_FROM_RECORD,
				   .local = ev->local,
				   .remote = ev->remote};
	struct sock_st *so = find_sock(tl, ev->sk);
	uint64_t from = smp->time;

	if (ev->kind == RSP_NET_TUPLE) {
		struct rsp_sock_info cur;
		int known = rsp_socktab__find(tl->stab, ev->sk, smp->time, &cur);

		/* A receive repeats what is known: add only what is new. */
		if (!known && !memcmp(&cur.local, &ev->local, sizeof(cur.local)) &&
		    !memcmp(&cur.remote, &ev->remote, sizeof(cur.remote)))
			return 0;
		si.state = RSP_TCP_ESTABLISHED;
		/*
		 * A TCP receive on a socket the stream saw no state change of:
		 * the connection was established before the stream began, so
		 * its 4-tuple holds from the start (its first operations too).
		 */
		if (known)
			from = 0;
	}
	/* Without the address, the socket's operations would be answered
	 * without their 4-tuple: refuse the record, as any untracked one. */
	if (rsp_socktab__add(tl->stab, &si, from))
		return -ENOMEM;
	if (!so || ev->kind != RSP_NET_STATE)
		return 0;
	if (ev->newstate == RSP_TCP_CLOSE) {
		tl__emit_op(tl, so, RSP_NETF_CLOSED);
		free_sock(tl, so);
	} else if (ev->oldstate == RSP_TCP_CLOSE) {
		/* A new socket at the address of a freed one. */
		tl__emit_op(tl, so, RSP_NETF_CLOSED);
		free_sock(tl, so);
	}
	return 0;
}

int tl__on_net(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct rsp_net_event ev;
	struct sock_st *so;

	if (rsp_net__decode(tl->schema, smp, &ev))
		return -EINVAL;
	if (ev.kind == RSP_NET_STATE || ev.kind == RSP_NET_TUPLE)
		return on_state(tl, smp, &ev);
	if (ev.kind == RSP_NET_RECV)
		return 0;
	so = get_sock(tl, ev.sk);
	if (!so)
		return -ENOMEM;
	so->seen = smp->time;
	if (ev.proto)
		so->proto = ev.proto;
	if (ev.family)
		so->family = ev.family;
	if (ev.kind == RSP_NET_SEND)
		on_send(tl, c, smp, &ev, so);
	else
		on_arrival(tl, c, smp, &ev, so);
	return 0;
}

/*
 * Whether the task interrupted by the softirq that is waking someone after
 * a data arrival is the sender of that data: loopback packets are delivered
 * in their sender's context. Evidence, strongest first: the waking's kernel
 * stack (the send under the softirq, or an interrupt's exit instead); a
 * kprobe send entered in this run; the socket's addresses are local.
 */
static bool is_sender(struct rsp_timeline *tl, struct cpu_state *c, const struct rsp_sample *smp)
{
	struct thr *t = tl__find_thr(tl, smp->tid);
	enum rsp_wake_context ctx =
		rsp_sleepclass__wake_context(tl->sc, smp->callchain, smp->nr_callchain);

	if (ctx == RSP_WCTX_SEND)
		return true;
	if (ctx == RSP_WCTX_INTERRUPT || !t || is_ksoftirqd(t))
		return false;
	if (t->kp_send_time && t->kp_send_time >= t->run_start)
		return true;
	return sock_is_local(tl, c->arr_sk, smp->time);
}

/*
 * A waking right after a data arrival in the same handler is the arrival's
 * receive wakeup. Returns true when the waker is the local sender (@w is
 * then complete); otherwise @w only gains the socket and the handler
 * decides the kind (the NIC for NET_RX).
 */
bool tl__net_waker(struct rsp_timeline *tl, struct cpu_state *c, const struct handler *h,
		   const struct rsp_sample *smp, struct rsp_waker *w)
{
	struct sock_st *so;

	if (!c->arr_sk || c->arr_depth != c->depth || (h && c->arr_time < h->start))
		return false;
	w->sk = c->arr_sk;
	w->flags |= RSP_WAKERF_NET;
	tl->st.net_wakings++;
	so = find_sock(tl, c->arr_sk);
	if (so && so->arrivals)
		so->wakeups++;
	if (!smp->tid || !h || !is_sender(tl, c, smp)) {
		/* Local traffic whose sender this context is not: not the NIC either. */
		if (h && sock_is_local(tl, c->arr_sk, smp->time)) {
			w->kind = RSP_WAKER_NONE;
			return true;
		}
		return false;
	}
	loopback_peer(tl, c, smp->tid, smp->pid, 0);
	w->kind = RSP_WAKER_THREAD;
	w->id = smp->tid;
	w->tgid = smp->pid;
	w->flags |= RSP_WAKERF_LOOPBACK;
	w->stack = smp->callchain;
	w->nr_stack = (uint32_t)smp->nr_callchain;
	tl->st.net_loopback++;
	return true;
}

void tl__expire_socks(struct rsp_timeline *tl, uint64_t before)
{
	for (uint32_t i = 0; i < tl->nr_socks; i++) {
		struct sock_st *so = &tl->socks[i];

		if (!so->used || so->seen >= before)
			continue;
		tl__emit_op(tl, so, RSP_NETF_OPEN);
		free_sock(tl, so);
		tl->st.sockets_expired++;
	}
	rsp_socktab__expire(tl->stab, before);
}

/*
 * Bounded state for a timeline fed forever (rspd's analysis thread): block
 * requests that saw no completion by @before (this kernel drops the
 * completions of interrupts that hit an idle CPU) are emitted as never
 * completed, threads unknown since a gap before @before are forgotten
 * (their exit may have been in the gap; if they live, they are learnt
 * again at their next record), and idle sockets (tl__expire_socks()).
 */
