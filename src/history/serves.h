/* serves.h - how a log names the store it served (serves.c): one rule for
 * the log files (logsrc.c) and the journal's entries (journal.c). Not
 * installed. */
#ifndef OA_HISTORY_SERVES_H
#define OA_HISTORY_SERVES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A log names a store where a path in it is the store's root: before
 * /blobs/sha256- (how a load names its model) or after OLLAMA_MODELS: (the
 * server config line). The path names the store when it resolves to the
 * same directory (device and inode, through any symlink; for the logs of
 * the machine mounted at machine_root, resolved inside that root, its
 * absolute symlinks too); a path that resolves to no directory is compared
 * as text, normalised (no "//", "/./" or trailing "/"), with the root as
 * given and as realpath() resolves it, and for machine_root as that machine
 * names it (without machine_root). */
#define OA_STORE_NAMES_TEXTS 4
#define OA_STORE_NAMES_MEMO 32
typedef struct oa_store_names {
	bool known;                         /* the root's device and inode below */
	dev_t dev;
	ino_t ino;
	char *texts[OA_STORE_NAMES_TEXTS];  /* normalised */
	size_t n_texts;
	char *machine_root;                 /* NULL: this machine */
	/* The verdict on each path seen lately: a log names the same few
	 * directories on every line. */
	struct oa_store_names_memo {
		char *path;
		bool yes;
	} memo[OA_STORE_NAMES_MEMO];
	size_t n_memo, next_memo;
} oa_store_names;

void oa_store_names_init(oa_store_names *sn, const char *store_root, const char *machine_root);
/* Does text (one log line or journal message, len bytes) name the store? */
bool oa_store_named_in(oa_store_names *sn, const char *text, size_t len);
void oa_store_names_free(oa_store_names *sn);

/* The directory an absolute path names on the machine mounted at root,
 * resolved as the kernel would with root as "/" (openat2's RESOLVE_IN_ROOT,
 * portably): st filled, 0; -1 with errno (ELOOP past the kernel's 40
 * links, ENOTDIR when it is no directory). */
int oa_dir_stat_in_root(const char *root, const char *path, struct stat *st);

#endif
