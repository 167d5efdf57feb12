/* suggest.h - did you mean: the model closest to a name that names none.
 * (The command closest to a mistyped one is commands.h's.) */
#ifndef OA_CLI_SUGGEST_H
#define OA_CLI_SUGGEST_H

#include "cli.h"

/* The model name of the store closest to a MODEL that named nothing, when
 * it is close enough to be a typo; NULL otherwise. */
const char *cli_suggest_model(const oa_store *s, const char *query);
/* Report a MODEL argument oa_store_resolve() did not resolve (not found, or
 * an ambiguous ID prefix), with a suggestion when there is one. */
void cli_model_unresolved(cli *c, const oa_store *s, const char *query, long idx);

#endif
