/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_NET_H
#define RSP_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <rsp/api.h>
#include <rsp/buf.h>
#include <rsp/record.h>
#include <rsp/schema.h>

/*
 * Network events, whatever their source. rspd records, per kernel, either
 * the sock tracepoints (sock_send_length, sk_data_ready, sock_recv_length)
 * or kprobes on the functions that send and queue data (tcp_sendmsg,
 * udp_sendmsg, tcp_rcv_established, udp_queue_rcv_skb, ...); the TCP state
 * tracepoints give socket addresses in both cases. rsp_net__decode() turns
 * any of them into one struct rsp_net_event, so that the analyses do not
 * care which source the kernel had.
 *
 * Every event names the socket by its kernel address (struct sock *): the
 * key that matches a send with the arrival of its answer (the paper's
 * matching by "memory address, not IP address").
 */

/* An endpoint. IPv4 addresses fill the first 4 bytes of addr. */
struct rsp_sockaddr {
	uint16_t family; /* AF_INET, AF_INET6; 0: unknown */
	uint16_t port;	 /* host order */
	uint8_t addr[16];
};

enum rsp_net_kind {
	RSP_NET_NONE,
	RSP_NET_SEND,	 /* a send on sk; bytes (tracepoint: returned; kprobe: asked) */
	RSP_NET_RECV,	 /* a receive on sk returned bytes */
	RSP_NET_ARRIVAL, /* data arrived for sk (the receive wakeup) */
	RSP_NET_STATE,	 /* a TCP state change of sk, with its 4-tuple */
	RSP_NET_TUPLE,	 /* sk's 4-tuple, seen in passing (a TCP receive) */
};

/* TCP states as the kernel numbers them (inet_sock_set_state). */
#define RSP_TCP_ESTABLISHED 1
#define RSP_TCP_SYN_SENT    2
#define RSP_TCP_CLOSE	    7
#define RSP_TCP_LISTEN	    10

#define RSP_IPPROTO_TCP 6
#define RSP_IPPROTO_UDP 17

struct rsp_net_event {
	uint8_t kind;		    /* enum rsp_net_kind */
	uint8_t proto;		    /* RSP_IPPROTO_*, 0: unknown */
	uint16_t family;	    /* AF_INET, AF_INET6, 0: unknown */
	int32_t oldstate, newstate; /* STATE */
	uint64_t sk;
	int64_t bytes;			   /* SEND, RECV; negative: an error */
	struct rsp_sockaddr local, remote; /* STATE, TUPLE */
};

/*
 * The kprobe source reads function arguments from registers
 * (PERF_SAMPLE_REGS_INTR): the first (the socket) in %di and the third
 * (the length of a send) in %dx, as the x86-64 calling convention passes
 * them. These are the perf register numbers of
 * arch/x86/include/uapi/asm/perf_regs.h.
 */
#define RSP_PERF_REG_X86_DX 3
#define RSP_PERF_REG_X86_DI 5
#define RSP_KPROBE_REGS	    ((1ull << RSP_PERF_REG_X86_DX) | (1ull << RSP_PERF_REG_X86_DI))

/**
 * rsp_net__decode() - the network event a sample carries
 * @s:   the stream's schema
 * @smp: a decoded sample (rsp_record__parse_sample())
 * @out: filled on success
 *
 * Return: 0; -ENOENT if @smp is not a network event; -EINVAL if it is one
 * but its data are malformed (a field or a register missing).
 */
RSP_API int rsp_net__decode(const struct rsp_schema *s, const struct rsp_sample *smp,
			    struct rsp_net_event *out);

/** rsp_net__is_event() - @ev (enum rsp_event) is a network event. */
RSP_API bool rsp_net__is_event(int ev);

/** rsp_net__proto_name() - "tcp", "udp" or "?". Static. */
RSP_API const char *rsp_net__proto_name(unsigned proto);

/**
 * rsp_sockaddr__format() - "127.0.0.1:8080", "[::1]:80", "?" into @buf
 * (at most @n bytes, NUL-terminated). Returns @buf.
 */
RSP_API char *rsp_sockaddr__format(const struct rsp_sockaddr *a, char *buf, size_t n);

/** rsp_sockaddr__addr() - the address alone: "127.0.0.1", "::1", "?". Returns @buf. */
RSP_API char *rsp_sockaddr__addr(const struct rsp_sockaddr *a, char *buf, size_t n);

/** rsp_sockaddr__is_loopback() - 127.0.0.0/8, ::1 or ::ffff:127.0.0.0/104. */
RSP_API bool rsp_sockaddr__is_loopback(const struct rsp_sockaddr *a);

#endif /* RSP_NET_H */
