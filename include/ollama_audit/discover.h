/*
 * discover.h - every Ollama store on the machine (spec §1.1; docs/multi-store.md).
 *
 * Candidates come from: $OLLAMA_MODELS; OLLAMA_MODELS= in the systemd unit
 * ollama.service and its ollama.service.d/NAME.conf drop-ins (Environment= in
 * every quoting form, and the files EnvironmentFile= names); /etc/default,
 * /etc/sysconfig and /etc/conf.d "ollama" environment files; <home>/.ollama/models
 * of every account in the password database; the service and distribution
 * defaults (/usr/share/ollama/.ollama/models, /var/lib/ollama and
 * /var/lib/ollama/.ollama/models, /root/.ollama/models); and $HOME/.ollama/models.
 *
 * The same store reached by several paths (symlinks, bind mounts) is one
 * store: candidates are merged by the device and inode of their root.
 * Stores whose blobs/ is one directory stay several stores, each naming the
 * others (blobs_shared): what one prunes, the others may need.
 *
 * Testing aid (documented in docs/multi-store.md): OLLAMA_AUDIT_SYSROOT=DIR
 * makes every system path (/etc, /usr, /lib, /var, /root, home directories
 * from the password file, absolute OLLAMA_MODELS values in system files)
 * relative to DIR, and reads the accounts from DIR/etc/passwd instead of
 * getpwent(); OLLAMA_AUDIT_PASSWD=FILE reads the accounts from FILE.
 * Nothing is ever written.
 */
#ifndef OLLAMA_AUDIT_DISCOVER_H
#define OLLAMA_AUDIT_DISCOVER_H

#include "ollama_audit/export.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* How a store was found: the command line, or a discovery source. */
typedef enum oa_store_source {
	OA_SOURCE_OTHER,            /* "discovered": none of these */
	OA_SOURCE_STORE_OPTION,     /* "--store" */
	OA_SOURCE_OLLAMA_MODELS,    /* "OLLAMA_MODELS": the environment */
	OA_SOURCE_SYSTEMD,          /* "systemd": ollama.service and its drop-ins */
	OA_SOURCE_ENVIRONMENT_FILE, /* "environment-file": /etc/default/ollama and the like */
	OA_SOURCE_HOME,             /* "home": <home>/.ollama/models of an account */
	OA_SOURCE_DEFAULT,          /* "default": a service or distribution default, $HOME */
} oa_store_source;
/* The name (a static string, as oa_store.how and oa_found_by.source say it). */
OA_EXPORT const char *oa_store_source_name(oa_store_source s);
/* The source a name stands for; OA_SOURCE_OTHER for any other. */
OA_EXPORT oa_store_source oa_store_source_of(const char *name);

/* One way a store was found. */
typedef struct oa_found_by {
	char *source;   /* "OLLAMA_MODELS", "systemd", "environment-file", "home", "default", "--store" */
	char *detail;   /* e.g. "/etc/systemd/system/ollama.service.d/models.conf:3", "user alice" */
	char *path;     /* the path as that source gives it (before sysroot prefixing) */
} oa_found_by;

typedef enum oa_cand_state {
	OA_CAND_STORE,      /* a readable store root */
	OA_CAND_MISSING,    /* nothing there (ENOENT/ENOTDIR) */
	OA_CAND_NOT_STORE,  /* a directory without manifests/ or blobs/ (and no models/ holding them) */
	OA_CAND_DENIED,     /* exists, but we may not read it */
	OA_CAND_UNKNOWN,    /* cannot tell whether it exists (a parent is not searchable) */
} oa_cand_state;

typedef struct oa_candidate {
	char *path;          /* the path we looked at (sysroot applied) */
	char *root;          /* the store root (path, or path/models), or NULL */
	oa_cand_state state;
	int err;             /* errno behind MISSING / DENIED / UNKNOWN */
	dev_t dev;           /* of the root (or of path when the root is not known) */
	ino_t ino;
	bool have_id;        /* dev/ino are valid */
	bool have_uid;       /* uid is valid (for UNKNOWN: the owner of the directory that stops us) */
	uid_t uid;           /* owner of the root directory */
	char *user;          /* its user name, or the decimal uid */
	oa_found_by *found;  /* every way it was reached, in discovery order */
	size_t n_found;
	char **paths;        /* every distinct path that reached it */
	size_t n_paths;
	char **blobs_shared; /* the roots of the other stores whose blobs/ is this one's (the same */
	size_t n_blobs_shared; /* directory once followed: a symlink, a bind mount; shared.h) */
} oa_candidate;

typedef struct oa_discovery {
	oa_candidate *v;
	size_t n, cap;
	char **notes;        /* what could not be read while discovering (unit files, passwd) */
	size_t n_notes;
} oa_discovery;

/* Discover every candidate. `extra` (n_extra paths) are stores named on the
 * command line (--store): they are merged in with source "--store". */
OA_EXPORT void oa_discover(oa_discovery *d, char *const *extra, size_t n_extra);
OA_EXPORT void oa_discovery_free(oa_discovery *d);
OA_EXPORT const char *oa_cand_state_name(oa_cand_state s);

/* Named on the command line (--store): nothing there is an error. */
OA_EXPORT bool oa_candidate_named(const oa_candidate *k);
/* Configured somewhere (not only a home or a default place): nothing there
 * is worth a note. */
OA_EXPORT bool oa_candidate_configured(const oa_candidate *k);

struct oa_store; /* store.h */

/* What a command reads a store for. */
typedef struct oa_open_options {
	const char *platform; /* "os/arch" that chooses a list's child (--platform); NULL: this machine */
	int header_mode;      /* enum oa_header_mode (headers.h) */
	int jobs;             /* threads the scan may use (oa_store.jobs): 0 one per online CPU */
	bool no_tag_facts;    /* oa_store.no_tag_facts: for a command that reads no reference set */
	struct oa_peer_index *peers; /* oa_store.peer_index: the set's peer index (shared.h), or NULL */
} oa_open_options;

/* The one way to open a store to audit: the store at path, found by source
 * (its oa_store.how), with the options set for oa_store_scan(). k, when
 * discovery found it, lends the store every way it was reached (k must
 * outlive the store). o NULL: no options. Returns 0, or -1 with a one-line
 * reason; close s either way. */
OA_EXPORT int oa_open_candidate(struct oa_store *s, const char *path, oa_store_source source,
                                const oa_candidate *k, const oa_open_options *o, char *err, size_t errlen);

/* The user name of a uid: the sysroot / OLLAMA_AUDIT_PASSWD file when set,
 * else getpwuid(), else the decimal uid. */
OA_EXPORT void oa_user_name(uid_t uid, char *buf, size_t len);

/* The home directory of a uid from the same account data (the sysroot
 * applied), or NULL when it has none we may use. Free the result. */
OA_EXPORT char *oa_user_home(uid_t uid);

/* Parse one systemd `Environment=` value (after the '='): space-separated
 * assignments, each possibly quoted with "..." or '...' and with C escapes.
 * Calls fn for every NAME=VALUE. Exposed for unit tests. */
typedef void (*oa_env_fn)(void *ctx, const char *name, const char *value);
OA_EXPORT void oa_systemd_env_parse(const char *value, oa_env_fn fn, void *ctx);
/* Parse one line of an environment file (KEY=VALUE, optional `export `,
 * quotes, # comments). Calls fn when the line is an assignment. */
OA_EXPORT void oa_envfile_line_parse(const char *line, oa_env_fn fn, void *ctx);


#endif
