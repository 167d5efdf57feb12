/* restore_select.h - what a restore puts back (restore_select.c): the
 * entries of the operations chosen, or of one model; and which of those
 * blobs a model the quarantine keeps holding needs too. Private to
 * src/space/; restore.c puts the chosen entries back. */
#ifndef OLLAMA_AUDIT_SPACE_RESTORE_SELECT_H
#define OLLAMA_AUDIT_SPACE_RESTORE_SELECT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a restore reads manifests from: the store (its root, its blobs/
 * when that is a real directory, else -1) and DIR/files. */
typedef struct restore_source {
	int root_fd, blobs_fd, files_fd;
} restore_source;

typedef struct restore_pick {
	size_t n;          /* entries of the index */
	bool *take;        /* put back */
	bool *keep;        /* of those, a blob a manifest DIR keeps holding needs:
	                    * linked into the store, its file stays in DIR */
	char **keep_op;    /* the operation such a kept file then belongs to, when
	                    * not its own (NULL) */
	json_t *ops;       /* the operations chosen (MODEL: of its manifests): id -> true */
	char newest[40];   /* the newest of them */
	char model[512];   /* MODEL as the quarantine records it, when one is asked */
} restore_pick;

/* Whether entry x is a manifest (rm's tag file): those go back first. */
bool restore_entry_is_manifest(json_t *x);

/* The operations chosen (last: the newest that holds entries; op: that
 * one; else all) and every entry of theirs. 0, or -1 with err when none
 * is. */
int restore_pick_ops(const restore_source *src, json_t *index, bool last, const char *op, restore_pick *p,
                     char *err, size_t errlen);

/* restore_pick_model's answer when MODEL matches several models only
 * case-insensitively. */
#define RESTORE_PICK_AMBIGUOUS (-2)

/* One model, as `rm` matches names (the exact case first, else the one
 * model it matches only case-insensitively): its manifests DIR holds, the
 * directories above them that went with them, and the entries holding a
 * blob those manifests reach (through lists and their children) when the
 * store does not have it. 0; -1 with err (no such model, nothing of it
 * held); RESTORE_PICK_AMBIGUOUS with err naming the models it matches. */
int restore_pick_model(const restore_source *src, json_t *index, const char *model, restore_pick *p, char *err,
                       size_t errlen);

/* Mark the blobs taken that a manifest DIR keeps holding reaches: a copy of
 * each stays in DIR for it (and belongs to that manifest's operation). */
void restore_pick_keep(const restore_source *src, json_t *entries, restore_pick *p);

/* After the restore: the kept copies go to the operation that needs them. */
void restore_pick_hand_over(json_t *entries, const restore_pick *p);

/* What the operations chosen still hold: entries, their allocated bytes,
 * the models whose manifests they hold, and those names (", "-separated,
 * cut with "..." to fit names). */
typedef struct restore_rest {
	size_t entries, models;
	uint64_t bytes;
	char *names;
	size_t names_len;
} restore_rest;
void restore_pick_rest(const restore_source *src, json_t *entries, const restore_pick *p, restore_rest *r);

void restore_pick_free(restore_pick *p);

#endif
