/*
 * bundle_write.h - `export`: what a set of models carries (carry.h)
 * written as a bundle (bundle.h): a POSIX pax tar to a file or a stream,
 * or the same members unpacked in a new directory. Members in this order:
 * the index, SHA256SUMS, every blob, then the tags, so that a tag never
 * lands before a blob it needs. Every blob is hashed as it is read, unless
 * the verify cache has a good entry for that very file (device, inode,
 * size, mtime, ctime, outside the racy window); one that does not hash to
 * its name stops the export, and nothing complete-looking is left: a file
 * or directory is written under a temporary name and renamed only at the
 * end, a stream is cut off without tar's end-of-archive blocks.
 */
#ifndef OLLAMA_AUDIT_BUNDLE_WRITE_H
#define OLLAMA_AUDIT_BUNDLE_WRITE_H

#include "ollama_audit/export.h"
#include "ollama_audit/carry.h"
#include "ollama_audit/verify_cache.h"

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum oa_bundle_dest { OA_DEST_FILE, OA_DEST_STREAM, OA_DEST_DIR };

typedef struct oa_export_opts {
	enum oa_bundle_dest dest;
	const char *path;                 /* the file or directory (FILE, DIR) */
	int fd;                           /* STREAM: where the tar goes */
	oa_verify_cache *cache;           /* good entries spare a blob's hashing; NULL: hash all */
	double racy_window;               /* seconds, as verify's (oa_verify_opts) */
	volatile sig_atomic_t *stop;      /* set by a signal handler: stop, as on an error */
	const char *tool;                 /* the index's "tool": "ollama-audit <version>" */
} oa_export_opts;

typedef struct oa_export_result {
	size_t blobs, tags;
	uint64_t bytes;         /* of the blobs written */
	size_t hashed, trusted; /* blobs hashed as read; trusted from the verify cache */
	bool corrupt;           /* stopped by a blob that is not what its name says */
	bool interrupted;
} oa_export_result;

/* Write the bundle. 0, or -1 with err (a blob that is not what its name
 * says names the model and the blob). */
OA_EXPORT int oa_export_write(const oa_store *s, const oa_carry *c, const oa_export_opts *o, oa_export_result *r,
                              char *err, size_t errlen);

/* The index document of a carry (bundle.h, docs/schema.md). */
OA_EXPORT char *oa_bundle_index_json(const oa_carry *c, const char *tool);

#endif
