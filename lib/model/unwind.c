// SPDX-License-Identifier: LGPL-2.1
/*
 * DWARF unwinding of captured user stacks with libunwind's remote API.
 *
 * The "remote" address space is a sample: access_reg() reads its registers
 * (PERF_SAMPLE_REGS_USER), access_mem() its copy of the stack
 * (PERF_SAMPLE_STACK_USER) and, outside the stack, the CFI of the object
 * mapped there. find_proc_info() finds the region of the address in the
 * process model at the sample's time, loads (once per object, cached) its
 * .eh_frame_hdr binary search table and .eh_frame with libelf, and hands
 * libunwind a UNW_INFO_FORMAT_REMOTE_TABLE over them, at the addresses the
 * object had in that process (its load bias from the region).
 *
 * Objects without .eh_frame_hdr (or with an encoding other than the
 * ubiquitous pcrel/udata4/datarel-sdata4), anonymous code and addresses
 * outside any region stop the unwind: the caller falls back to frame
 * pointers.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <libunwind.h>
#include <rsp/maps.h>
#include <rsp/symbols.h>
#include <rsp/unwind.h>
#include <rsp/ustackz.h>
#include "internal/schema.h"
#include "internal/symbolizer.h"
#include "internal/u64map.h"
#include "internal/hash.h"

/* Not in libunwind's public headers, but exported (perf declares it the same way). */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					      unw_dyn_info_t *di, unw_proc_info_t *pi,
					      int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

#define DEFAULT_MAX_OBJECTS 64
#define MAX_OBJS_PER_UNWIND 16

/* DW_EH_PE_* encodings of .eh_frame_hdr that rsp reads (what every toolchain emits). */
#define DW_EH_PE_udata4	 0x03
#define DW_EH_PE_sdata4	 0x0b
#define DW_EH_PE_pcrel	 0x10
#define DW_EH_PE_datarel 0x30

/* One object's unwind tables, at link-time addresses. */
struct cfi {
	uint64_t key;
	struct cfi *prev, *next; /* LRU, head most recent */
	bool ok;
	uint8_t *hdr, *eh;
	uint64_t hdr_vaddr, hdr_size, eh_vaddr, eh_size;
	uint64_t table_vaddr, fde_count;
	struct {
		uint64_t vaddr, offset, filesz;
	} loads[8];
	int nr_loads;
};

struct rsp_unwinder {
	struct rsp_symbolizer *sym;
	unw_addr_space_t as;
	struct rsp_u64map map; /* key -> index in objs */
	struct cfi **objs;
	size_t nr, cap, max;
	struct cfi *head, *tail;
	struct rsp_unwinder_stats st;
	/* a compressed user stack (RSP_RECORD_ZSAMPLE), inflated for the unwind */
	struct rsp_ustackz *z;
	uint8_t *zbuf; /* UINT16_MAX bytes: the most a sample's stack holds */
};

/* What one unwind reads: the sample, and the objects it has touched. */
struct uctx {
	struct rsp_unwinder *u;
	uint32_t pid;
	uint64_t time;
	const uint64_t *regs;
	uint64_t mask;
	const uint8_t *stack;
	uint64_t stack_size, sp;
	struct {
		const struct cfi *cfi;
		uint64_t bias;
	} objs[MAX_OBJS_PER_UNWIND];
	int nr_objs;
};

const char *rsp_unwind_method__name(enum rsp_unwind_method m)
{
	return m == RSP_UNWIND_DWARF ? "dwarf" : m == RSP_UNWIND_FP ? "fp" : "none";
}

/* ---- the CFI cache ------------------------------------------------------- */

static void cfi_free(struct cfi *c)
{
	if (!c)
		return;
	free(c->hdr);
	free(c->eh);
	free(c);
}

static int read_loads(Elf *elf, struct cfi *c)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n && c->nr_loads < 8; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		c->loads[c->nr_loads].vaddr = ph.p_vaddr;
		c->loads[c->nr_loads].offset = ph.p_offset;
		c->loads[c->nr_loads].filesz = ph.p_filesz;
		c->nr_loads++;
	}
	return c->nr_loads ? 0 : -ENOENT;
}

/* A copy of section @name: its data and link-time address. */
static int copy_section(Elf *elf, const char *name, uint8_t **data, uint64_t *vaddr, uint64_t *size)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENOENT;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(n, name))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || sh.sh_type == SHT_NOBITS || d->d_size < 8)
			return -ENOENT;
		*data = malloc(d->d_size);
		if (!*data)
			return -ENOMEM;
		memcpy(*data, d->d_buf, d->d_size);
		*vaddr = sh.sh_addr;
		*size = d->d_size;
		return 0;
	}
	return -ENOENT;
}

/* .eh_frame_hdr: version, three encodings, eh_frame_ptr, fde_count, the table. */
static int parse_hdr(struct cfi *c)
{
	const uint8_t *h = c->hdr;
	uint32_t count;

	if (c->hdr_size < 12 || h[0] != 1 || h[2] != DW_EH_PE_udata4 ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -ENOTSUP;
	memcpy(&count, h + 8, 4);
	if (12 + (uint64_t)count * 8 > c->hdr_size)
		return -EINVAL;
	c->fde_count = count;
	c->table_vaddr = c->hdr_vaddr + 12;
	return 0;
}

static struct cfi *cfi_load(Elf *elf)
{
	struct cfi *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (read_loads(elf, c) ||
	    copy_section(elf, ".eh_frame_hdr", &c->hdr, &c->hdr_vaddr, &c->hdr_size) ||
	    copy_section(elf, ".eh_frame", &c->eh, &c->eh_vaddr, &c->eh_size) || parse_hdr(c))
		return c; /* cached as a failure: no retry for every frame */
	c->ok = true;
	return c;
}

static void lru_unlink(struct rsp_unwinder *u, struct cfi *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		u->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		u->tail = c->prev;
	c->prev = c->next = NULL;
}

static void lru_push(struct rsp_unwinder *u, struct cfi *c)
{
	c->next = u->head;
	if (u->head)
		u->head->prev = c;
	else
		u->tail = c;
	u->head = c;
}

/* Drop the least recently used object (not touched by the current unwind). */
static void evict(struct rsp_unwinder *u, const struct uctx *x)
{
	struct cfi *c = u->tail;
	uint32_t idx;

	for (int i = 0; c && i < x->nr_objs; i++) {
		if (x->objs[i].cfi == c) {
			c = c->prev;
			i = -1;
		}
	}
	if (!c || rsp_u64map__get(&u->map, c->key, &idx))
		return;
	lru_unlink(u, c);
	rsp_u64map__del(&u->map, c->key);
	u->objs[idx] = u->objs[--u->nr];
	if (idx < u->nr)
		rsp_u64map__put(&u->map, u->objs[idx]->key, idx);
	cfi_free(c);
}

static uint64_t object_key(const struct rsp_map_view *mv)
{
	uint64_t h = RSP_HASH_INIT;

	h = rsp_hash__u64(h, (uint64_t)mv->maj << 32 | mv->min);
	h = rsp_hash__u64(h, mv->ino);
	h = rsp_hash__u64(h, mv->special ? 0x7664736f : 0);
	return rsp_hash__key(h);
}

static struct cfi *open_object(struct rsp_unwinder *u, const struct uctx *x,
			       const struct rsp_map_view *mv)
{
	struct cfi *c = NULL;
	const char *why;
	struct stat st;
	Elf *elf = NULL;
	int fd = -1;

	elf_version(EV_CURRENT);
	if (mv->special && !strcmp(mv->special, "[vdso]")) {
		/* The vdso is the same image in every process of our ABI: read ours. */
		const Elf64_Ehdr *eh = (const void *)getauxval(AT_SYSINFO_EHDR);

		if (eh)
			elf = elf_memory((char *)eh,
					 eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize);
	} else {
		fd = rsp_symbolizer__open_mapped(u->sym, x->pid, x->time, mv, &st, &why);
		if (fd >= 0)
			elf = elf_begin(fd, ELF_C_READ, NULL);
	}
	if (elf && elf_kind(elf) == ELF_K_ELF)
		c = cfi_load(elf);
	else
		c = calloc(1, sizeof(*c)); /* a failure, cached */
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return c;
}

static struct cfi *get_cfi(struct rsp_unwinder *u, const struct uctx *x,
			   const struct rsp_map_view *mv)
{
	uint64_t key = object_key(mv);
	struct cfi *c;
	uint32_t idx;

	if (!rsp_u64map__get(&u->map, key, &idx)) {
		c = u->objs[idx];
		u->st.object_hits++;
		lru_unlink(u, c);
		lru_push(u, c);
		return c;
	}
	u->st.object_misses++;
	if (u->nr >= u->max)
		evict(u, x);
	if (u->nr == u->cap) {
		size_t cap = u->cap ? u->cap * 2 : 16;
		struct cfi **v = realloc(u->objs, cap * sizeof(*v));

		if (!v)
			return NULL;
		u->objs = v;
		u->cap = cap;
	}
	c = open_object(u, x, mv);
	if (!c)
		return NULL;
	c->key = key;
	if (rsp_u64map__put(&u->map, key, (uint32_t)u->nr)) {
		cfi_free(c);
		return NULL;
	}
	u->objs[u->nr++] = c;
	lru_push(u, c);
	return c;
}

/* The link-time address that file offset @off of @c holds. */
static int offset_to_vaddr(const struct cfi *c, uint64_t off, uint64_t *vaddr)
{
	for (int i = 0; i < c->nr_loads; i++) {
		if (off >= c->loads[i].offset && off < c->loads[i].offset + c->loads[i].filesz) {
			*vaddr = off - c->loads[i].offset + c->loads[i].vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- libunwind's accessors ------------------------------------------------ */

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct uctx *x = arg;
	struct rsp_map_view mv;
	unw_dyn_info_t di;
	const struct cfi *c;
	uint64_t vaddr, bias;

	if (rsp_maps__find(rsp_symbolizer__maps(x->u->sym), x->pid, x->time, ip, &mv) || mv.anon)
		return -UNW_ENOINFO;
	c = get_cfi(x->u, x, &mv);
	if (!c || !c->ok || offset_to_vaddr(c, mv.pgoff, &vaddr))
		return -UNW_ENOINFO;
	bias = mv.start - vaddr;
	if (x->nr_objs < MAX_OBJS_PER_UNWIND) {
		int i;

		for (i = 0; i < x->nr_objs && x->objs[i].cfi != c; i++)
			;
		if (i == x->nr_objs) {
			x->objs[i].cfi = c;
			x->objs[i].bias = bias;
			x->nr_objs++;
		}
	}
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = mv.start;
	di.end_ip = mv.end;
	di.u.rti.segbase = bias + c->hdr_vaddr;
	di.u.rti.table_data = bias + c->table_vaddr;
	/* In words: each entry is two 4-byte fields. */
	di.u.rti.table_len = c->fde_count * 8 / sizeof(unw_word_t);
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
	/* libunwind frees the DWARF info of a table itself. */
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *dilap, void *arg)
{
	return -UNW_ENOINFO;
}

/*
 * Whether the word at @addr lies in the @size bytes at @base. Written with
 * differences, never addr + 8: the addresses come from the sampled
 * registers and stack, and a word at the top of the address space would
 * wrap past the bound and be read far outside the copy.
 */
static bool word_in(uint64_t addr, uint64_t base, uint64_t size)
{
	return addr >= base && size >= sizeof(unw_word_t) &&
	       addr - base <= size - sizeof(unw_word_t);
}

/* A word of the CFI of an object this unwind has touched. */
static int read_cfi(const struct uctx *x, uint64_t addr, unw_word_t *val)
{
	for (int i = 0; i < x->nr_objs; i++) {
		const struct cfi *c = x->objs[i].cfi;
		uint64_t v = addr - x->objs[i].bias;

		if (word_in(v, c->eh_vaddr, c->eh_size)) {
			memcpy(val, c->eh + (v - c->eh_vaddr), sizeof(*val));
			return 0;
		}
		if (word_in(v, c->hdr_vaddr, c->hdr_size)) {
			memcpy(val, c->hdr + (v - c->hdr_vaddr), sizeof(*val));
			return 0;
		}
	}
	return -UNW_EINVAL;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write, void *arg)
{
	struct uctx *x = arg;

	if (write)
		return -UNW_EINVAL;
	if (word_in(addr, x->sp, x->stack_size)) {
		memcpy(val, x->stack + (addr - x->sp), sizeof(*val));
		return 0;
	}
	return read_cfi(x, addr, val);
}

/* libunwind's x86-64 register numbers -> perf's (asm/perf_regs.h). */
static int perf_reg(unw_regnum_t r)
{
	static const int map[] = {
		[UNW_X86_64_RAX] = 0,  [UNW_X86_64_RDX] = 3,  [UNW_X86_64_RCX] = 2,
		[UNW_X86_64_RBX] = 1,  [UNW_X86_64_RSI] = 4,  [UNW_X86_64_RDI] = 5,
		[UNW_X86_64_RBP] = 6,  [UNW_X86_64_RSP] = 7,  [UNW_X86_64_R8] = 16,
		[UNW_X86_64_R9] = 17,  [UNW_X86_64_R10] = 18, [UNW_X86_64_R11] = 19,
		[UNW_X86_64_R12] = 20, [UNW_X86_64_R13] = 21, [UNW_X86_64_R14] = 22,
		[UNW_X86_64_R15] = 23, [UNW_X86_64_RIP] = 8,
	};

	return r >= 0 && (size_t)r < sizeof(map) / sizeof(map[0]) ? map[r] : -1;
}

static int reg_value(const struct uctx *x, int perf_bit, uint64_t *val)
{
	if (perf_bit < 0 || !(x->mask & (1ull << perf_bit)))
		return -1;
	*val = x->regs[__builtin_popcountll(x->mask & ((1ull << perf_bit) - 1))];
	return 0;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *val, int write, void *arg)
{
	uint64_t v;

	if (write || reg_value(arg, perf_reg(reg), &v))
		return -UNW_EBADREG;
	*val = v;
	return 0;
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

/* ---- the unwinder ---------------------------------------------------------- */

struct rsp_unwinder *rsp_unwinder__new(struct rsp_symbolizer *sym, size_t max_objects)
{
	struct rsp_unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->sym = sym;
	u->max = max_objects ? max_objects : DEFAULT_MAX_OBJECTS;
	rsp_u64map__init(&u->map);
	u->as = unw_create_addr_space(&accessors, 0);
	if (!u->as) {
		free(u);
		return NULL;
	}
	/* Every sample is another address space: libunwind must not cache across them. */
	unw_set_caching_policy(u->as, UNW_CACHE_NONE);
	u->z = rsp_ustackz__new();
	u->zbuf = malloc(UINT16_MAX);
	if (!u->z || !u->zbuf) {
		rsp_unwinder__delete(u);
		return NULL;
	}
	return u;
}

void rsp_unwinder__delete(struct rsp_unwinder *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nr; i++)
		cfi_free(u->objs[i]);
	free(u->objs);
	rsp_u64map__exit(&u->map);
	unw_destroy_addr_space(u->as);
	rsp_ustackz__delete(u->z);
	free(u->zbuf);
	free(u);
}

void rsp_unwinder__stats(const struct rsp_unwinder *u, struct rsp_unwinder_stats *st)
{
	*st = u->st;
	st->objects = u->nr;
}

int rsp_unwinder__unwind(struct rsp_unwinder *u, const struct rsp_schema *schema,
			 const struct rsp_sample *smp, uint64_t *ips, int max)
{
	const struct perf_event_attr *a = rsp_schema__evsel_attr(schema, smp->evsel);
	struct uctx x = {.u = u, .pid = smp->pid, .time = smp->time};
	unw_cursor_t cursor;
	unw_word_t ip;
	int n = 0;

	if (!smp->user_regs || !smp->user_stack || !smp->user_stack_size || !a || max <= 0)
		return -ENOENT;
	if (a->sample_regs_user != RSP_UNWIND_REGS_MASK)
		return -EINVAL;
	x.regs = smp->user_regs;
	x.mask = a->sample_regs_user;
	x.stack = smp->user_stack;
	x.stack_size = smp->user_stack_size;
	if (smp->user_stack_z) {
		if (rsp_ustackz__inflate(u->z, smp, u->zbuf, UINT16_MAX)) {
			u->st.failures++;
			return -EINVAL;
		}
		x.stack = u->zbuf;
	}
	if (reg_value(&x, 7, &x.sp) || reg_value(&x, 8, &ip))
		return -EINVAL;
	u->st.unwinds++;
	ips[n++] = ip;
	if (unw_init_remote(&cursor, u->as, &x) < 0) {
		u->st.failures++;
		return n;
	}
	while (n < max && unw_step(&cursor) > 0) {
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || !ip)
			break;
		ips[n++] = ip;
	}
	if (n == 1)
		u->st.failures++;
	u->st.frames += (uint64_t)n;
	return n;
}

/* The user part of a perf callchain, without its markers. */
static int fp_user(const struct rsp_sample *smp, uint64_t *ips, int max)
{
	bool user = false;
	int n = 0;

	for (uint64_t i = 0; i < smp->nr_callchain && n < max; i++) {
		uint64_t a = smp->callchain[i];

		if (a >= PERF_CONTEXT_MAX) {
			user = a == PERF_CONTEXT_USER;
			continue;
		}
		if (user)
			ips[n++] = a;
	}
	return n;
}

int rsp_unwind__user_chain(struct rsp_unwinder *u, const struct rsp_schema *schema,
			   const struct rsp_sample *smp, uint64_t *ips, int max,
			   enum rsp_unwind_method *method)
{
	int fp = fp_user(smp, ips, max), n;
	uint64_t *tmp;

	*method = fp ? RSP_UNWIND_FP : RSP_UNWIND_NONE;
	if (!u || !smp->user_stack_size)
		return fp;
	tmp = malloc((size_t)max * sizeof(*tmp));
	if (!tmp)
		return fp;
	n = rsp_unwinder__unwind(u, schema, smp, tmp, max);
	/* DWARF when it found callers, and at least as many as the frame pointers. */
	if (n > 1 && n >= fp) {
		memcpy(ips, tmp, (size_t)n * sizeof(*tmp));
		*method = RSP_UNWIND_DWARF;
		fp = n;
	}
	free(tmp);
	return fp;
}
