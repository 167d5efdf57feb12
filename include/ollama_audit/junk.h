/*
 * junk.h - the junk taxonomy of a store (spec §1.3, §5.1; docs/disk-space.md):
 * every entry of blobs/ that no manifest needs, temp directories in the root,
 * and empty directories under manifests/, each with its category, sizes,
 * age against the server's 1-hour grace period and, when it must never be
 * removed, the reason.
 *
 * What counts as referenced is refs.h's conservative reference set.
 */
#ifndef OLLAMA_AUDIT_JUNK_H
#define OLLAMA_AUDIT_JUNK_H

#include "ollama_audit/export.h"
#include "ollama_audit/inode_ledger.h"

#include "ollama_audit/refs.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h> /* dev_t, ino_t, nlink_t: <sys/stat.h> has them only for POSIX programs */

#define OA_SERVER_GRACE_SECONDS 3600 /* server/images.go: layerPruneGracePeriod */

/* The deepest directory below manifests/ (in path components) that the
 * empty-dirs category lists and that a plan may name: one limit for both, so
 * everything planned can be applied. */
#define OA_MANIFESTS_DEPTH_MAX 8

enum oa_junk_cat {
	OA_JUNK_ORPHAN,        /* sha256-<hex> that no manifest references */
	OA_JUNK_MANIFEST_BLOB, /* same, but its content is a manifest or manifest list */
	OA_JUNK_PARTIAL,       /* -partial data and -partial-N part files */
	OA_JUNK_TEMP,          /* .tmp, sha256-<digits>, quantize temps, split-gguf-*, ollama-safetensors* */
	OA_JUNK_LEGACY,        /* sha256:<hex> names */
	OA_JUNK_FOREIGN,       /* anything else in blobs/ */
	OA_JUNK_EMPTY_DIR,     /* empty directories under manifests/ */
	OA_JUNK_CAT_COUNT
};

/* What `prune` removes without --what: what the server's start-up prune deletes. */
#define OA_JUNK_DEFAULT ((1u << OA_JUNK_ORPHAN) | (1u << OA_JUNK_PARTIAL) | (1u << OA_JUNK_TEMP))
#define OA_JUNK_ALL ((1u << OA_JUNK_CAT_COUNT) - 1)

/* "orphans", "manifest-blobs", "partials", "temps", "legacy", "foreign", "empty-dirs" */
OA_EXPORT const char *oa_junk_cat_name(enum oa_junk_cat c);
/* The same as a JSON key: snake_case ("manifest_blobs", "empty_dirs"). */
OA_EXPORT const char *oa_junk_cat_key(enum oa_junk_cat c);
/* Parse a comma list of category names ("all" and "default" too). 0, or -1 with err. */
OA_EXPORT int oa_junk_parse_what(const char *list, unsigned *mask, char *err, size_t errlen);

enum oa_junk_where { OA_IN_BLOBS, OA_IN_MANIFESTS, OA_IN_ROOT };

typedef struct oa_junk {
	enum oa_junk_cat cat;
	enum oa_junk_where where;
	char *path;             /* relative to the store root: blobs/..., manifests/..., <name> */
	const char *kind;       /* oa_blob_class_name() or "empty-dir" / "temp-dir" */
	oa_digest_hex hex;      /* the digest its name carries, or "" */
	bool is_dir, is_symlink;
	const char *link_target; /* borrowed from the store's blob, or NULL */
	struct stat lst;        /* lstat of the entry itself */
	uint64_t apparent;      /* st_size (a directory: of everything in it) */
	uint64_t allocated;     /* st_blocks * 512 (a directory: of everything in it) */
	uint64_t freed_alone;   /* allocated bytes freed by removing only this entry */
	uint64_t apparent_alone; /* a directory: st_size of the inodes all of whose links lie in it
	                            (what the category totals count: hard links counted once) */
	double age;             /* seconds since its mtime */
	bool in_grace;          /* younger than the server's 1 h grace period */
	const char *keep;       /* why it is never removed, or NULL */
	const char *note;       /* e.g. why removing it frees no space */
	int group;              /* index into partial groups, or -1 */
} oa_junk;

/* One interrupted download: its -partial data file and -partial-N parts. */
typedef struct oa_partial_group {
	oa_digest_hex hex;
	int data;               /* index of the -partial entry, or -1 */
	size_t n_parts;
	bool parts_ok;          /* every part file parsed, with plausible numbers */
	int64_t total;          /* sum of the parts' Size (else the data file size) */
	int64_t downloaded;     /* sum of the parts' Completed; -1 unknown */
	uint64_t allocated;     /* of every file of the group */
} oa_partial_group;

typedef struct oa_junk_list {
	oa_junk *v;
	size_t n, cap;
	oa_partial_group *groups; /* sorted by hex */
	size_t n_groups, groups_cap;
	size_t count[OA_JUNK_CAT_COUNT];
	uint64_t apparent[OA_JUNK_CAT_COUNT], allocated[OA_JUNK_CAT_COUNT];
} oa_junk_list;

/* Add to `set` the (device, inode) of every name that resolving the symlink
 * dirfd/name goes through: its target, and every directory and further
 * symlink on the way there (not the link itself). Removing any of those
 * names breaks the link; this is what prune and rm refuse to remove while a
 * manifest that stays uses a symlinked blob. Stops quietly at a dangling
 * component or after 40 links. */
OA_EXPORT void oa_symlink_chain(int dirfd, const char *name, oa_inode_ledger *set);

/* How many names this store has for the file (dev, ino): in blobs/, and
 * tags that are hard links of it. A complete blob with more links than that
 * may be another store's (a tag or a blob hard-linked there): it is kept. */
OA_EXPORT size_t oa_store_names_of(const oa_store *s, dev_t dev, ino_t ino);

/* check: an orphan-blob or manifest-blob finding whose digest the reference
 * set holds is no orphan (it names what another store sharing the blob
 * files references, or what a manifest the scan does not parse reaches):
 * drop it, so check and prune agree. */
OA_EXPORT void oa_findings_drop_referenced(oa_store *s);

/* The one disk-usage walker (du's blobs/ total, stores' SIZE, Prometheus'
 * bytes by state, the size of a temp directory): the directory open at `fd`
 * and everything below it, as `du -s` counts it: lstat only (a symlink
 * counts as itself, never its target), directories included, recursively
 * (at most 32 levels), each (device, inode) once in the totals. */
#define OA_USAGE_ROOT ((size_t)-1)
typedef struct oa_usage {
	oa_inode_ledger names;  /* every name reached, sorted; a name's owner is the index
	                         * into tops of the entry it lies under, or OA_USAGE_ROOT */
	char **tops;            /* the directory's own entries, in strcmp order */
	size_t n_tops;
	bool tops_borrowed;     /* oa_usage_blobs: tops are the scan's blob names (not copies: 1.7 MB
	                         * on a store of 22,000 blobs), valid while the store is open */
	uint64_t apparent, allocated; /* each inode once */
	bool incomplete;        /* something could not be listed or stat'ed, or was too deep */
} oa_usage;
OA_EXPORT void oa_usage_walk(int fd, oa_usage *u);
/* The same for a scanned store's blobs/, from the scan's lstat of each
 * entry (only symlinks and directories are looked at again). */
OA_EXPORT void oa_usage_blobs(const oa_store *s, oa_usage *u);
OA_EXPORT void oa_usage_free(oa_usage *u);
/* Bytes of several walks together (stores that share hard links), each inode once. */
OA_EXPORT void oa_usage_sum(const oa_usage *const *v, size_t n, uint64_t *apparent, uint64_t *allocated);

/* Collect the junk of a scanned store. `refs` is a built reference set:
 * blobs it names are kept (listed with a keep reason), never removable; so
 * is any entry that a symlinked blob a manifest uses resolves through (its
 * target, or a temp directory holding it). */
OA_EXPORT void oa_junk_collect(oa_store *s, const oa_refset *refs, double now, oa_junk_list *out);
OA_EXPORT void oa_junk_free(oa_junk_list *j);
/* The interrupted download of digest hex, or NULL (bsearch). */
OA_EXPORT const oa_partial_group *oa_junk_group(const oa_junk_list *j, const char *hex);

/* Sizes of a directory tree (oa_usage_walk of dirfd/name, not following a
 * symlink at name). freed = allocated bytes of the inodes all of whose links
 * lie in the tree (directories always). */
OA_EXPORT void oa_dir_usage(int dirfd, const char *name, uint64_t *apparent, uint64_t *allocated,
                  uint64_t *freed);

/* Why a file Ollama does not write is kept in a blobs/ that is a symlink:
 * the link may lead anywhere (a store's root, /), so only Ollama's names go. */
#define OA_LINKED_FOREIGN_KEEP "blobs/ is a symlink and Ollama does not write this name: look at it and remove it yourself"

#endif
