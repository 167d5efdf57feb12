/* rm_select.h - the models `rm` plans for a selection (--unused-for,
 * --filter, --sort, --limit): exactly the ones `list` shows for it
 * (select.h), each as its tag (a manifest list's other rows go with it),
 * once; and what removing them frees, which du says under a selection
 * (library-internal). */
#ifndef OA_AUDIT_RM_SELECT_H
#define OA_AUDIT_RM_SELECT_H

#include "audit/select.h"
#include "ollama_audit/store.h"

#include <stddef.h>
#include <stdint.h>

/* The tags rm plans for q (its prefix is not used): among the models named
 * (n_named indexes of tags, the MODEL arguments) or, with none, every
 * model; in q's order, at most q->limit rows of list's. *n of them
 * (calloc'd). */
size_t *oa_rm_select(const oa_list_query *q, oa_store *s, const size_t *named, size_t n_named, size_t *n);
/* What the rm plan of those tags would free (oa_plan_rm, no --min-age,
 * shadows kept, as `rm` plans them): allocated bytes. */
uint64_t oa_rm_select_frees(oa_store *s, const size_t *tags, size_t n);

#endif
