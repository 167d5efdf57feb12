/* last_used.c - when the logs last show each model loaded (the list and du
 * views' LAST USED), and its "last_used" field. */
#include "ollama_audit/last_used.h"
#include "ollama_audit/humanize.h"

bool oa_last_used_newest(const oa_last_used *u, const size_t *models, size_t n, int64_t *ns)
{
	bool any = false;
	for (size_t i = 0; i < n; i++)
		if (u->loaded[models[i]] && (!any || u->last_ns[models[i]] > *ns)) {
			*ns = u->last_ns[models[i]];
			any = true;
		}
	return any;
}

void oa_view_last_used(const oa_last_used *u, const size_t *models, size_t n, json_t *o)
{
	if (!u || !u->have_logs)
		return;
	int64_t last;
	char buf[48];
	bool loaded = oa_last_used_newest(u, models, n, &last);
	if (loaded)
		oa_iso8601((time_t)(last / 1000000000), (long)(last % 1000000000), buf, sizeof buf);
	json_object_set_new(o, "last_used", loaded ? json_string(buf) : json_null());
}
