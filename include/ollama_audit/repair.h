/*
 * repair.h - what `repair` finds and does (docs/carry.md): the damaged
 * blobs of a store's models (missing, empty, truncated, of another size,
 * or not what their name says: verify found that very file corrupt, or
 * hashed now), a good copy of each from a bundle, a directory, a store, or
 * any other store on the machine (hashed before use), and, applied, the
 * good copy in place of the damaged file. A blob with no good copy
 * anywhere is moved into the quarantine (deleted without one), so that
 * `ollama pull` really fetches it (the puller keeps any blob file that is
 * there, whatever its bytes); a file whose bytes hash to its name is never
 * moved, whatever size a manifest declares. Running it is repair_run.h's.
 */
#ifndef OLLAMA_AUDIT_REPAIR_H
#define OLLAMA_AUDIT_REPAIR_H

#include "ollama_audit/export.h"
#include "ollama_audit/digest.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum oa_damage {
	OA_DAMAGE_MISSING,   /* no file (or a symlink to nothing) */
	OA_DAMAGE_EMPTY,     /* 0 bytes where the manifest declares some */
	OA_DAMAGE_TRUNCATED, /* fewer bytes than declared */
	OA_DAMAGE_SIZE,      /* more bytes than declared */
	OA_DAMAGE_DIGEST,    /* the right size, the wrong bytes */
};
/* "missing", "empty", "truncated", "wrong-size", "digest-mismatch" */
OA_EXPORT const char *oa_damage_name(enum oa_damage d);

enum oa_repair_state {
	OA_REPAIR_CAN_MEND,   /* a dry run: a good copy was found */
	OA_REPAIR_CAN_REMOVE, /* a dry run: no good copy; --apply removes the damaged file (into
	                         --quarantine when given) */
	OA_REPAIR_ABSENT,     /* no good copy and nothing here: what a pull fetches */
	OA_REPAIR_MENDED,     /* the good copy replaced it */
	OA_REPAIR_REMOVED,    /* moved away, into the quarantine */
	OA_REPAIR_SKIPPED,    /* changed since it was looked at, or not a regular file: left alone */
	OA_REPAIR_FAILED,
	OA_REPAIR_KEPT,       /* left in place: its bytes hash to its name (a manifest declares the
	                         wrong size), or could not be read to tell, or a source that could
	                         not be read may hold a good copy */
	OA_REPAIR_DELETED,    /* no good copy and no quarantine: deleted, its bytes being not what
	                         its name says (re-checked just before) */
};
/* "can-mend", "can-remove", "absent", "mended", "removed", "skipped", "failed", "kept", "deleted" */
OA_EXPORT const char *oa_repair_state_name(enum oa_repair_state s);

typedef struct oa_repair_blob {
	oa_digest_hex hex;
	int64_t size;          /* what the manifests declare */
	int64_t size_here;     /* the file's, -1 when missing */
	enum oa_damage damage;
	const char *known_by;  /* "size", "verify-cache" (verify found this very file corrupt), "hashed" */
	char **models;         /* every tag of the store that names it */
	size_t n_models;
	char *source;          /* the good copy (a path; a bundle's: path:member), or NULL */
	const char *source_kind; /* "bundle", "directory", "store" */
	const char *how;       /* applied: "reflink", "hardlink", "copy" */
	enum oa_repair_state state;
	char *note;            /* why it was skipped or failed, or NULL */
	/* repair's own */
	bool intact;           /* judged by its size, its bytes hash to its name (or could not be
	                          read to tell): never moved nor replaced */
	oa_file_info st;       /* the damaged file as the scan saw it */
	char tmp[40];          /* the good copy's temporary in blobs/, or "" */
} oa_repair_blob;

/* A model left with a blob only a fetch can bring back. */
typedef struct oa_repair_advice {
	char *name;
	bool registry;         /* its manifest is as a registry serves it */
	char *command;         /* "ollama pull NAME", or NULL when no registry has it */
	char *text;            /* what to do, one sentence */
} oa_repair_advice;

typedef struct oa_repair_result {
	char *store;
	oa_repair_blob *blobs;
	size_t n_blobs;
	oa_repair_advice *advice;
	size_t n_advice;
	size_t searched;       /* the sources looked in (bundle, directory, other stores) */
	char *source_error;    /* --from could not be read (then no good copy came from it) */
	bool verified;         /* the models' blobs were hashed now (--verify) */
	bool applied, interrupted;
	bool unlocked;         /* no_lock: the store or the quarantine could not be locked */
	char operation[40];    /* --quarantine: its operation id (restore --op) */
	char *leftover;        /* temporaries that could not be removed, and why, or NULL */
} oa_repair_result;

OA_EXPORT void oa_repair_result_free(oa_repair_result *r);

#endif
