// SPDX-License-Identifier: LGPL-2.1
/*
 * Network events from either source (sock tracepoints or kprobes) as one
 * struct rsp_net_event. Field offsets were resolved once by the schema;
 * kprobe arguments are read from the sampled registers.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <rsp/net.h>
#include <rsp/tp.h>
#include "internal/schema.h"

bool rsp_net__is_event(int ev)
{
	switch (ev) {
	case RSP_EV_sock_send_length:
	case RSP_EV_sock_recv_length:
	case RSP_EV_sk_data_ready:
	case RSP_EV_inet_sock_set_state:
	case RSP_EV_tcp_rcv_space_adjust:
	case RSP_EV_kp_tcp_sendmsg:
	case RSP_EV_kp_udp_sendmsg:
	case RSP_EV_kp_udpv6_sendmsg:
	case RSP_EV_kp_tcp_rcv_established:
	case RSP_EV_kp_udp_queue_rcv_skb:
	case RSP_EV_kp_udpv6_queue_rcv_skb:
		return true;
	default:
		return false;
	}
}

const char *rsp_net__proto_name(unsigned proto)
{
	return proto == RSP_IPPROTO_TCP ? "tcp" : proto == RSP_IPPROTO_UDP ? "udp" : "?";
}

/* Register @bit of the sample's REGS_INTR, in the bit order of the evsel's mask. */
static int intr_reg(const struct rsp_schema *s, const struct rsp_sample *smp, unsigned bit,
		    uint64_t *out)
{
	const struct perf_event_attr *a = rsp_schema__evsel_attr(s, smp->evsel);
	uint64_t mask = a ? a->sample_regs_intr : 0;
	unsigned idx;

	if (!(mask & (1ull << bit)) || !smp->intr_regs)
		return -EINVAL;
	idx = (unsigned)__builtin_popcountll(mask & ((1ull << bit) - 1));
	if (idx >= smp->nr_intr_regs)
		return -EINVAL;
	*out = smp->intr_regs[idx];
	return 0;
}

static int decode_kprobe(const struct rsp_schema *s, const struct rsp_sample *smp,
			 struct rsp_net_event *out)
{
	uint64_t v;

	if (intr_reg(s, smp, RSP_PERF_REG_X86_DI, &out->sk) || !out->sk)
		return -EINVAL;
	switch (smp->event) {
	case RSP_EV_kp_tcp_sendmsg:
	case RSP_EV_kp_udp_sendmsg:
	case RSP_EV_kp_udpv6_sendmsg:
		out->kind = RSP_NET_SEND;
		if (intr_reg(s, smp, RSP_PERF_REG_X86_DX, &v))
			return -EINVAL;
		out->bytes = (int64_t)v;
		break;
	default:
		out->kind = RSP_NET_ARRIVAL;
		break;
	}
	out->proto =
		smp->event == RSP_EV_kp_tcp_sendmsg || smp->event == RSP_EV_kp_tcp_rcv_established
			? RSP_IPPROTO_TCP
			: RSP_IPPROTO_UDP;
	if (smp->event == RSP_EV_kp_udp_sendmsg || smp->event == RSP_EV_kp_udp_queue_rcv_skb)
		out->family = AF_INET;
	else if (smp->event == RSP_EV_kp_udpv6_sendmsg ||
		 smp->event == RSP_EV_kp_udpv6_queue_rcv_skb)
		out->family = AF_INET6;
	return 0;
}

/* An endpoint from a tracepoint's family, port and v4/v6 address arrays. */
static void endpoint(struct rsp_sockaddr *a, uint64_t family, uint64_t port, struct rsp_str v4,
		     struct rsp_str v6)
{
	memset(a, 0, sizeof(*a));
	a->family = (uint16_t)family;
	a->port = (uint16_t)port;
	if (family == AF_INET && v4.ptr && v4.len >= 4)
		memcpy(a->addr, v4.ptr, 4);
	else if (family == AF_INET6 && v6.ptr && v6.len >= 16)
		memcpy(a->addr, v6.ptr, 16);
	else
		a->family = 0;
}

static int decode_state(const struct rsp_schema *s, const struct rsp_sample *smp,
			struct rsp_net_event *out)
{
	struct rsp_tp_inet_sock_set_state st;

	if (rsp_tp__inet_sock_set_state(s, smp, &st))
		return -EINVAL;
	out->kind = RSP_NET_STATE;
	out->sk = st.skaddr;
	out->proto = (uint8_t)(st.protocol ? st.protocol : RSP_IPPROTO_TCP);
	out->family = (uint16_t)st.family;
	out->oldstate = (int32_t)st.oldstate;
	out->newstate = (int32_t)st.newstate;
	endpoint(&out->local, st.family, st.sport, st.saddr, st.saddr_v6);
	endpoint(&out->remote, st.family, st.dport, st.daddr, st.daddr_v6);
	return 0;
}

static int decode_tuple(const struct rsp_schema *s, const struct rsp_sample *smp,
			struct rsp_net_event *out)
{
	struct rsp_tp_tcp_rcv_space_adjust t;

	if (rsp_tp__tcp_rcv_space_adjust(s, smp, &t))
		return -EINVAL;
	out->kind = RSP_NET_TUPLE;
	out->sk = t.skaddr;
	out->proto = RSP_IPPROTO_TCP;
	out->family = (uint16_t)t.family;
	endpoint(&out->local, t.family, t.sport, t.saddr, t.saddr_v6);
	endpoint(&out->remote, t.family, t.dport, t.daddr, t.daddr_v6);
	return 0;
}

int rsp_net__decode(const struct rsp_schema *s, const struct rsp_sample *smp,
		    struct rsp_net_event *out)
{
	union {
		struct rsp_tp_sock_send_length snd;
		struct rsp_tp_sock_recv_length rcv;
		struct rsp_tp_sk_data_ready dr;
	} u;

	memset(out, 0, sizeof(*out));
	switch (smp->event) {
	case RSP_EV_sock_send_length:
		if (rsp_tp__sock_send_length(s, smp, &u.snd))
			return -EINVAL;
		*out = (struct rsp_net_event){.kind = RSP_NET_SEND,
					      .proto = (uint8_t)u.snd.protocol,
					      .family = (uint16_t)u.snd.family,
					      .sk = u.snd.sk,
					      .bytes = u.snd.ret};
		return 0;
	case RSP_EV_sock_recv_length:
		if (rsp_tp__sock_recv_length(s, smp, &u.rcv))
			return -EINVAL;
		*out = (struct rsp_net_event){.kind = RSP_NET_RECV,
					      .proto = (uint8_t)u.rcv.protocol,
					      .family = (uint16_t)u.rcv.family,
					      .sk = u.rcv.sk,
					      .bytes = u.rcv.ret};
		return 0;
	case RSP_EV_sk_data_ready:
		if (rsp_tp__sk_data_ready(s, smp, &u.dr))
			return -EINVAL;
		*out = (struct rsp_net_event){.kind = RSP_NET_ARRIVAL,
					      .proto = (uint8_t)u.dr.protocol,
					      .family = (uint16_t)u.dr.family,
					      .sk = u.dr.skaddr};
		return 0;
	case RSP_EV_inet_sock_set_state:
		return decode_state(s, smp, out);
	case RSP_EV_tcp_rcv_space_adjust:
		return decode_tuple(s, smp, out);
	default:
		if (!rsp_net__is_event(smp->event))
			return -ENOENT;
		return decode_kprobe(s, smp, out);
	}
}

char *rsp_sockaddr__addr(const struct rsp_sockaddr *a, char *buf, size_t n)
{
	char tmp[INET6_ADDRSTRLEN];

	if (a->family != AF_INET && a->family != AF_INET6)
		snprintf(buf, n, "?");
	else if (!inet_ntop(a->family, a->addr, tmp, sizeof(tmp)))
		snprintf(buf, n, "?");
	else
		snprintf(buf, n, "%s", tmp);
	return buf;
}

char *rsp_sockaddr__format(const struct rsp_sockaddr *a, char *buf, size_t n)
{
	char tmp[INET6_ADDRSTRLEN];

	rsp_sockaddr__addr(a, tmp, sizeof(tmp));
	if (a->family == AF_INET6)
		snprintf(buf, n, "[%s]:%u", tmp, a->port);
	else if (a->family == AF_INET)
		snprintf(buf, n, "%s:%u", tmp, a->port);
	else
		snprintf(buf, n, "?");
	return buf;
}

bool rsp_sockaddr__is_loopback(const struct rsp_sockaddr *a)
{
	static const uint8_t v6_lo[16] = {[15] = 1};
	static const uint8_t v4mapped[12] = {[10] = 0xff, [11] = 0xff};

	if (a->family == AF_INET)
		return a->addr[0] == 127;
	if (a->family != AF_INET6)
		return false;
	return !memcmp(a->addr, v6_lo, 16) ||
	       (!memcmp(a->addr, v4mapped, 12) && a->addr[12] == 127);
}
