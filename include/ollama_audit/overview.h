/*
 * overview.h - what `report` shows of a store, as one typed result: the
 * headline totals (the numbers du prints), where the bytes go (each row's
 * unique bytes, each shared blob, junk by category: the treemap's tiles),
 * the models as list shows them, and the findings as check reports them,
 * errors first. Built from results the caller already has (the scanned
 * store, its oa_du_store, what the logs say); nothing here reads a disk.
 * Strings are the store's (borrowed) unless said otherwise.
 */
#ifndef OLLAMA_AUDIT_OVERVIEW_H
#define OLLAMA_AUDIT_OVERVIEW_H

#include "ollama_audit/export.h"

#include "ollama_audit/du.h"
#include "ollama_audit/finding.h"
#include "ollama_audit/junk.h"
#include "ollama_audit/last_used.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stdint.h>

/* Headline totals: one store's, or the sum of several (the fleet). */
typedef struct oa_overview_totals {
	size_t stores;
	size_t models;            /* tags `ollama list` shows */
	size_t manifests;         /* du's rows: tags that are the same manifest count once */
	uint64_t referenced;      /* du: totals.referenced_bytes */
	uint64_t unique, shared;  /* sum of the rows' unique bytes; shared blobs once each */
	uint64_t junk;            /* every junk category, allocated */
	size_t junk_entries;
	uint64_t junk_bytes[OA_JUNK_CAT_COUNT];
	size_t junk_count[OA_JUNK_CAT_COUNT];
	uint64_t reclaimable;     /* du: totals.reclaimable_bytes (what prune frees now) */
	uint64_t blobs;           /* du: totals.blobs_bytes */
	bool quarantine_known;    /* a quarantine of the store was named (report --quarantine) */
	size_t quarantine_entries; /* what it holds (oa_quarantine_held) */
	uint64_t quarantine_bytes;
	size_t findings[3];       /* by oa_severity */
} oa_overview_totals;

/* One tile of the treemap: where some bytes go. */
enum oa_tile_kind { OA_TILE_UNIQUE, OA_TILE_SHARED, OA_TILE_JUNK, OA_TILE_KINDS };
typedef struct oa_overview_tile {
	enum oa_tile_kind kind;
	char *label;              /* own allocation; raw (the writer escapes) */
	const char *blob;         /* a shared blob's name under blobs/, else NULL */
	uint64_t bytes;           /* allocated */
} oa_overview_tile;

/* One model, as `list` shows it, with its du row's bytes. */
typedef struct oa_overview_model {
	const char *name;
	const char *format, *runner;   /* "gguf"/"safetensors"/..., "llamacpp"/"mlx"/...; "invalid"/"-" */
	const char *arch, *params, *quant; /* NULL: unknown */
	bool size_known;               /* false: list prints "-" (remote) */
	int64_t size;                  /* list's SIZE: what the manifest declares */
	uint64_t unique, disk;         /* of its manifest's du row */
	bool loaded;                   /* the logs show a load (only with logs) */
	int64_t last_ns;               /* its newest load */
} oa_overview_model;

typedef struct oa_overview_store {
	const char *root, *how;
	const char *user;              /* the owner (the caller's string) */
	oa_overview_totals t;
	oa_overview_tile *tiles;       /* unique tiles, then shared, then junk; each kind largest first */
	size_t n_tiles;
	oa_overview_model *models;     /* du's order: largest unique first */
	size_t n_models;
	bool have_logs;                /* last use is known */
	const oa_finding **findings;   /* errors, then warnings, then infos; in the store's order */
	size_t n_findings;
} oa_overview_store;

OA_EXPORT void oa_overview_build(const oa_store *s, const oa_du_store *d, const oa_last_used *lu,
                       const char *user, oa_overview_store *out);
OA_EXPORT void oa_overview_free(oa_overview_store *o);
/* The fleet: add a store's totals. */
OA_EXPORT void oa_overview_totals_add(oa_overview_totals *sum, const oa_overview_totals *t);

/* What to do about a finding of this code, in one line (NAME: its model). */
OA_EXPORT const char *oa_finding_remedy(oa_finding_code id);
/* The same for one finding, its model's name in place of NAME (a new string). */
OA_EXPORT char *oa_finding_remedy_for(const oa_finding *f);

#endif
