/* SPDX-License-Identifier: LGPL-2.1 */
#ifndef RSP_WINDOW_H
#define RSP_WINDOW_H

#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>
#include <rsp/api.h>

/*
 * The window: a bounded store of raw perf records, one list of chunks per
 * CPU, oldest chunks evicted first when the byte budget is reached.
 *
 * Concurrency: one writer (the capture thread) appends; any number of
 * readers pin a time range and iterate it while the writer goes on. A
 * pinned chunk that gets evicted is unlinked at once and freed when its
 * last reader unpins, so capture never waits for a query (beyond a short
 * lock when it rolls to a new chunk) and a query never sees a chunk freed.
 *
 * Each stored entry is the record's timestamp (u64) followed by the record
 * as the kernel wrote it; or, for records appended by reference (a file
 * mapped for reading), the timestamp and a pointer to the record. A source
 * whose records carry their own time at a fixed offset (rsp's compact BPF
 * records: struct rsp_brec_hdr) is declared so (time_offset) and its
 * records are stored as they are, without the prefix; a record of such a
 * stream that does not carry the time it is appended with there (a gap
 * marker) is stored behind a 16-byte wrapper that holds its time.
 */
struct rsp_window;
struct rsp_wsnap;
struct rsp_witer;

struct rsp_window_config {
	size_t budget;	   /* bytes of chunks the window may hold */
	unsigned nr_cpus;  /* CPU indexes are 0 .. nr_cpus-1 */
	size_t chunk_size; /* 0: derived from budget and nr_cpus */
	/*
	 * Streams per CPU (0 means 1, at most 4): appends name a stream,
	 * s = k * nr_cpus + cpu for the k-th source of records of that CPU
	 * (rspd: 0 its perf ring, 1 its BPF ring); entries say the CPU.
	 */
	unsigned streams_per_cpu;
	/*
	 * Per source k (the k of the streams above): 0, its records are stored
	 * behind an 8-byte time prefix; else the offset in each of its records
	 * of the u64 time (a multiple of 8, at least 8), which the window reads
	 * there instead (rspd: offsetof(struct rsp_brec_hdr, time) for its BPF
	 * rings). The time a record is appended with stays the one readers get.
	 */
	uint16_t time_offset[4];
	/*
	 * Bit k set: records of rsp's BPF kind k (RSP_BREC_*, below 32) in a
	 * chunk that rsp_window__compress() compresses are also kept raw beside
	 * its frame, for rsp_window__pin_side() (rspd: the names and stacks
	 * that later records refer to). 0: none.
	 */
	uint32_t side_bpf_kinds;
};

/*
 * Kinds of records, counted per chunk so that the stats say what the
 * window's bytes hold: perf record types (a sample of an event the writer
 * did not name counts as PERF_RECORD_SAMPLE), rsp's compact BPF records by
 * their kind, and samples of the schema's evsel i (rsp_window__append_kind()).
 * 0: anything else. rsp_wkind__name() (rsp/wkind.h) names them.
 */
#define RSP_WKIND_OTHER	     0u
#define RSP_WKIND_PERF(type) ((type) < 32u ? (unsigned)(type) : RSP_WKIND_OTHER)
#define RSP_WKIND_BPF(kind)  ((kind) < 32u ? 32u + (unsigned)(kind) : RSP_WKIND_OTHER)
#define RSP_WKIND_EVSELS     96u
#define RSP_WKIND_EVSEL(i)   ((i) < RSP_WKIND_EVSELS ? 64u + (unsigned)(i) : RSP_WKIND_PERF(9u))
#define RSP_WINDOW_KINDS     (64u + RSP_WKIND_EVSELS)

/* Records and bytes (what they take of the chunks, prefixes included) of one kind. */
struct rsp_wkind_count {
	uint64_t records;
	uint64_t bytes;
};

struct rsp_window_stats {
	size_t budget;
	size_t chunk_size;
	size_t bytes_used;	/* chunk bytes used: records with their 8-byte time
				 * prefixes (none for self-timed sources, see
				 * time_offset), 16 bytes per record held by
				 * reference */
	size_t bytes_allocated; /* chunk memory, including pinned evicted chunks */
	/*
	 * What the records take in memory: bytes_used, but compressed chunks
	 * at their compressed size (rsp_window__compress()).
	 */
	size_t bytes_stored;
	uint64_t compressed_chunks; /* chunks in the window held compressed */
	uint64_t compressed_raw;    /* their records' bytes (part of bytes_used) */
	uint64_t compressed_bytes;  /* what they take (part of bytes_stored) */
	/* rsp_window__compress() since the window's creation */
	uint64_t zchunks;   /* chunks compressed */
	uint64_t zkept_raw; /* chunks tried that did not shrink by 1/8: kept raw */
	double zseconds;    /* CPU time spent compressing */
	uint64_t chunks;    /* chunks in the window */
	uint64_t records;   /* records in the window */
	uint64_t appended;  /* records ever appended */
	uint64_t evicted_chunks;
	uint64_t evicted_records;
	uint64_t dropped;	/* records that could not be stored (too big, ENOMEM) */
	uint64_t lost_marked;	/* lost records noted by rsp_window__note_lost() */
	uint64_t oldest;	/* time of the oldest record held, 0 if empty */
	uint64_t newest;	/* time of the newest record held */
	uint64_t complete_from; /* every CPU's records are complete from here on */
	/* what the window holds by kind (RSP_WKIND_*): they add up to records
	 * and bytes_used, which are taken from the same counts */
	struct rsp_wkind_count kinds[RSP_WINDOW_KINDS];
};

/** One record of a window, as an iterator yields it. */
struct rsp_wentry {
	uint64_t time;
	uint32_t cpu;
	const struct perf_event_header *rec; /* valid while the snapshot is pinned */
};

/**
 * rsp_window__new() - create an empty window
 *
 * The budget must hold at least two chunks per CPU; the chunk size shrinks
 * (down to 8 KiB) to make it so. Return: the window or NULL (errno set:
 * EINVAL for a budget too small or a time_offset not a multiple of 8,
 * ENOMEM). Free with rsp_window__delete().
 */
RSP_API struct rsp_window *rsp_window__new(const struct rsp_window_config *cfg);
/** rsp_window__delete() - free the window; every snapshot must be unpinned. NULL is fine. */
RSP_API void rsp_window__delete(struct rsp_window *w);

/**
 * rsp_window__append() - store one record (writer only)
 * @cpu:  the stream it came from: its CPU, or k * nr_cpus + CPU (streams_per_cpu)
 * @time: its timestamp
 * @rec:  the record, rec->size bytes, a multiple of 8
 *
 * No allocation except when rolling to a new chunk (reused from evicted
 * ones once the budget is reached). Return: 0, or -E2BIG (record larger
 * than a chunk), -EINVAL (bad cpu or size), -ENOMEM; all but -EINVAL are
 * counted as dropped.
 */
RSP_API int rsp_window__append(struct rsp_window *w, unsigned cpu, uint64_t time,
			       const struct perf_event_header *rec);

/**
 * rsp_window__append_kind() - rsp_window__append(), naming the record's kind
 * @kind: RSP_WKIND_*, below RSP_WINDOW_KINDS (rsp_window__append() takes it
 *        from the header: the perf record type, or the BPF record's kind)
 *
 * Return: as rsp_window__append(); -EINVAL for a kind out of range too.
 */
RSP_API int rsp_window__append_kind(struct rsp_window *w, unsigned cpu, uint64_t time,
				    const struct perf_event_header *rec, unsigned kind);

/**
 * rsp_window__append_ref() - store a reference to a record (writer only)
 * @cpu:  the CPU it ran on
 * @time: its timestamp
 * @rec:  the record, 8-byte aligned, which the caller has checked (its
 *        size a multiple of 8, all of it readable): the window does not
 *        read it, readers will
 *
 * The window keeps @rec's address, not a copy: the caller keeps the record
 * alive and unchanged until rsp_window__delete(). For a window over a
 * mapped file, where copying would only duplicate the file's pages. An
 * entry takes 16 bytes of chunk space (and of the budget). Return: 0, or
 * -EINVAL (bad cpu, misaligned @rec), -ENOMEM (counted as dropped).
 */
RSP_API int rsp_window__append_ref(struct rsp_window *w, unsigned cpu, uint64_t time,
				   const struct perf_event_header *rec);

/** A reference for rsp_window__append_refs(): a record's time and address. */
struct rsp_wref {
	uint64_t time;
	const struct perf_event_header *rec;
};

/**
 * rsp_window__append_refs() - rsp_window__append_ref() of @n references in
 * their order, for a writer that has many at once (writer only)
 * @cpu: the CPU they ran on
 * @v:   the references (each @rec as rsp_window__append_ref() wants it)
 * @err: 0, or the error of the first reference not stored, as
 *       rsp_window__append_ref() would have returned it
 *
 * The window ends as @n calls of rsp_window__append_ref() would leave it;
 * a chunk's counters are updated once per run of references it takes
 * instead of once per reference. Return: how many were stored (all @n
 * unless *@err is set).
 */
RSP_API size_t rsp_window__append_refs(struct rsp_window *w, unsigned cpu, const struct rsp_wref *v,
				       size_t n, int *err);

/**
 * rsp_window__note_lost() - record a gap the writer itself caused (writer only)
 *
 * Appends a synthesized PERF_RECORD_LOST (id 0, @nr lost) in rsp's record
 * layout, so that readers see the gap where it happened, exactly as they
 * see the kernel's own PERF_RECORD_LOST.
 */
RSP_API int rsp_window__note_lost(struct rsp_window *w, unsigned cpu, uint64_t time, uint64_t nr);

/**
 * rsp_window__compress() - compress cold chunks (any one thread at a time,
 * beside the writer and readers)
 * @before: compress sealed chunks (the writer has moved past them) whose
 *          newest record is older than this
 * @max:    at most this many chunks in this call (0: no limit)
 *
 * Each is replaced by a zstd frame of its bytes, which then counts against
 * the budget (but at least a quarter of its raw bytes: see window.c), so
 * the window holds that much more history. Pins decompress what they take
 * (into memory of their own, the caller's), so readers see no difference
 * but the time and memory that takes: choose @before so that the readers
 * that follow the window as it is written (rspd's analysis thread) stay
 * after it. A snapshot already holding a chunk keeps its raw copy until
 * unpinned. Chunks of references (rsp_window__append_ref()) are never
 * compressed. Return: how many chunks were compressed, or -ENOMEM.
 */
RSP_API int rsp_window__compress(struct rsp_window *w, uint64_t before, unsigned max);

/** rsp_window__stats() - a consistent copy of the counters. */
RSP_API void rsp_window__stats(struct rsp_window *w, struct rsp_window_stats *st);
/** rsp_window__bytes_used() - rsp_window__stats()'s bytes_used, without the counts by kind. */
RSP_API size_t rsp_window__bytes_used(struct rsp_window *w);
/** rsp_window__complete_from() - rsp_window__stats()'s complete_from, without the chunk walk. */
RSP_API uint64_t rsp_window__complete_from(struct rsp_window *w);
RSP_API unsigned rsp_window__nr_cpus(const struct rsp_window *w);

/**
 * rsp_window__pin() - pin every chunk that may hold records in [from, to]
 *
 * Records appended after the pin are not part of the snapshot. Compressed
 * chunks among them are decompressed here, into memory the snapshot owns
 * (allocated by the calling thread). Return: the snapshot (free it with
 * rsp_wsnap__unpin()) or NULL (errno: ENOMEM; EIO for a chunk that does
 * not decompress, which only memory corruption could cause).
 */
RSP_API struct rsp_wsnap *rsp_window__pin(struct rsp_window *w, uint64_t from, uint64_t to);
/**
 * rsp_window__pin_stream() - rsp_window__pin() for a reader that uses each
 * record only until its next rsp_witer__next() (it copies what it keeps)
 *
 * Compressed chunks are not decompressed at the pin: an iterator
 * decompresses each as it reaches it and frees it when it moves on, so a
 * pass over the whole window holds one chunk per stream, not all of them
 * raw. Such an iteration may stop early: check rsp_witer__error().
 */
RSP_API struct rsp_wsnap *rsp_window__pin_stream(struct rsp_window *w, uint64_t from, uint64_t to);
/**
 * rsp_window__pin_side() - rsp_window__pin_stream() for a reader that wants
 * only the records of the window's side kinds (rsp_window__side_kinds())
 *
 * Its iterators read a compressed chunk's side records (kept raw beside
 * its frame) instead of decompressing it, and every record of the chunks
 * that are not compressed: the reader skips what it does not want.
 */
RSP_API struct rsp_wsnap *rsp_window__pin_side(struct rsp_window *w, uint64_t from, uint64_t to);
/** rsp_window__side_kinds() - the window's rsp_window_config.side_bpf_kinds. */
RSP_API uint32_t rsp_window__side_kinds(const struct rsp_window *w);
/** rsp_wsnap__unpin() - release a snapshot's chunks and free it. NULL is fine. */
RSP_API void rsp_wsnap__unpin(struct rsp_wsnap *snap);
/** Time bounds of what the snapshot holds (0, 0 if empty). */
RSP_API void rsp_wsnap__span(const struct rsp_wsnap *snap, uint64_t *oldest, uint64_t *newest);
/** rsp_wsnap__window() - the window @snap pins chunks of. */
RSP_API struct rsp_window *rsp_wsnap__window(const struct rsp_wsnap *snap);

/**
 * rsp_witer__new() - iterate a snapshot's records in [from, to] in time order
 *
 * A k-way merge of the per-CPU streams by timestamp (ties by CPU). Within
 * one CPU the kernel's order is kept: it is time order except for records
 * written by an interrupt between another record's timestamp and its
 * reservation, a few hundred ns apart at most. Return: NULL on ENOMEM.
 * Free with rsp_witer__delete() before unpinning the snapshot.
 */
RSP_API struct rsp_witer *rsp_witer__new(const struct rsp_wsnap *snap, uint64_t from, uint64_t to);

/*
 * Where an iteration over [from, to] stopped in one stream: the first record
 * after @to in the stream's order (or the end of its last chunk). Every
 * record before it is at or before @to, so an iteration of a later range
 * (from > the old @to) may start there rather than scan the chunk from its
 * start: a reader that follows the window pass by pass (rspd's analysis
 * thread, every flush) would otherwise rescan each stream's newest chunk,
 * up to 1 MiB, on every pass.
 */
struct rsp_wmark {
	uint64_t seq; /* the chunk (its linking; 0: none) */
	size_t off;
};

/** rsp_wsnap__streams() - how many streams @snap has: the size of a marks array. */
RSP_API unsigned rsp_wsnap__streams(const struct rsp_wsnap *snap);
/**
 * rsp_witer__resume() - rsp_witer__new() starting each stream at @marks
 * (rsp_wsnap__streams() of them, from rsp_witer__marks() of an iteration
 * of an earlier range of the same window; NULL: from the start). A mark
 * whose chunk the snapshot does not hold is ignored (that stream is
 * scanned from its first chunk). @from must be after the range the marks
 * were taken at.
 */
RSP_API struct rsp_witer *rsp_witer__resume(const struct rsp_wsnap *snap, uint64_t from,
					    uint64_t to, const struct rsp_wmark *marks);
/** rsp_witer__marks() - after rsp_witer__next() returned 0: where each stream stopped. */
RSP_API void rsp_witer__marks(const struct rsp_witer *it, struct rsp_wmark *marks);
RSP_API void rsp_witer__delete(struct rsp_witer *it);
/**
 * rsp_witer__error() - after rsp_witer__next() returned 0: 0 if every
 * stream was read to its end, else the errno that ended one early (ENOMEM,
 * or EIO for a chunk that did not decompress; only a streaming snapshot's
 * iterators decompress, see rsp_window__pin_stream()).
 */
RSP_API int rsp_witer__error(const struct rsp_witer *it);
/** rsp_witer__next() - 1 and the next entry, or 0 at the end. */
RSP_API int rsp_witer__next(struct rsp_witer *it, struct rsp_wentry *e);

#endif /* RSP_WINDOW_H */
