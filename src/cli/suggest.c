/* suggest.c - did you mean: the model closest to a name that names none,
 * when it is close enough to be a typo. The command closest to a mistyped
 * one is commands.c's: it reads the table, which depends on every command. */
#include "suggest.h"
#include "cli_machine.h"
#include "base/util.h"

#include <stdlib.h>
#include <string.h>

const char *cli_suggest_model(const oa_store *s, const char *query)
{
	/* A query without a tag is compared with the names without theirs, so
	 * `demo-llama` finds demo-llama:1b. */
	const char *slash = strrchr(query, '/');
	bool tagged = strchr(slash ? slash : query, ':') != NULL;
	const char *best = NULL;
	size_t best_d = (size_t)-1;
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		if (m->anchor || m->sibling)
			continue;
		char *cand = oa_xstrdup(m->display);
		char *last = strrchr(cand, '/');
		char *colon = strchr(last ? last : cand, ':');
		if (!tagged && colon)
			*colon = '\0';
		size_t d = oa_edit_distance(query, cand);
		free(cand);
		if (d < best_d) {
			best_d = d;
			best = m->display;
		}
	}
	return best && oa_edit_close(best_d, strlen(query)) ? best : NULL;
}

void cli_model_unresolved(cli *c, const oa_store *s, const char *query, long idx)
{
	if (idx == OA_RESOLVE_AMBIGUOUS_ID) {
		cli_fail(c, "model-not-found", s->root, "%s: model '%s' is an ambiguous ID prefix", s->root, query);
		return;
	}
	const char *near = cli_suggest_model(s, query);
	if (near)
		cli_fail(c, "model-not-found", s->root, "%s: model '%s' not found; did you mean %s?", s->root, query,
		         near);
	else
		cli_fail(c, "model-not-found", s->root, "%s: model '%s' not found", s->root, query);
}


