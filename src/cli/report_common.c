/* report_common.c - the findings report shared by check and verify. */
#include "report_common.h"
#include "cli_multi.h"
#include "base/jsonutil.h"
#include "ollama_audit/report.h"
#include "base/util.h"

#include <string.h>

bool model_selected(const cli *c, const oa_store *s, const char *display)
{
	if (c->n_args == 0)
		return true;
	for (size_t i = 0; i < c->n_args; i++) {
		long idx = oa_store_resolve(s, c->args[i]);
		if (idx >= 0 && strcmp(s->models[idx].display, display) == 0)
			return true;
	}
	return false;
}

/* With MODEL arguments only those models' findings count; without, all. */
bool finding_selected(const cli *c, const oa_store *s, const oa_finding *f)
{
	if (c->n_args == 0)
		return true;
	return f->model && model_selected(c, s, f->model);
}

bool check_args_resolve(cli *c, const oa_store *s)
{
	bool ok = true;
	for (size_t i = 0; i < c->n_args; i++) {
		long idx = cli_resolve_model(c, s, c->args[i]);
		if (idx == OA_RESOLVE_AMBIGUOUS_NAME) {
			ok = false;
		} else if (idx < 0) {
			cli_model_unresolved(c, s, c->args[i], idx);
			ok = false;
		}
	}
	if (!ok)
		c->exit_code |= OA_EXIT_USAGE;
	return ok;
}

void report_findings(cli *c, const oa_store *s, const char *schema, const char *summary_line,
                     json_t *summary, bool first)
{
	size_t counts[3] = { 0, 0, 0 };
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (!finding_selected(c, s, f))
			continue;
		counts[f->severity]++;
		if ((int)f->severity >= c->fail_on || f->severity == OA_SEV_ERROR) {
			if (strcmp(f->code, "unreadable") == 0)
				c->exit_code |= OA_EXIT_OPERATIONAL;
			else if (f->severity == OA_SEV_ERROR)
				c->exit_code |= OA_EXIT_ERRORS;
			else if ((int)f->severity >= c->fail_on)
				c->exit_code |= OA_EXIT_WARNINGS;
		}
	}
	json_object_set_new(summary, "errors", json_integer((json_int_t)counts[OA_SEV_ERROR]));
	json_object_set_new(summary, "warnings", json_integer((json_int_t)counts[OA_SEV_WARNING]));
	json_object_set_new(summary, "infos", json_integer((json_int_t)counts[OA_SEV_INFO]));
	/* combined totals, and --format prometheus (cli_multi.c) */
	cli_multi_store_done(c, (oa_store *)s, schema, summary);
	if (c->format == OUT_PROMETHEUS)
		return;

	if (c->format == OUT_CSV) {
		if (first)
			printf("store,code,severity,model,digest,path,message\n");
		for (size_t i = 0; i < s->findings.n; i++) {
			const oa_finding *f = &s->findings.v[i];
			if (!finding_selected(c, s, f))
				continue;
			csv_field(stdout, s->root, false);
			csv_field(stdout, f->code, false);
			csv_field(stdout, oa_severity_name(f->severity), false);
			csv_field(stdout, f->model, false);
			csv_field(stdout, f->digest, false);
			csv_field(stdout, f->path, false);
			csv_field(stdout, f->message, true);
		}
		return;
	}
	if (c->format == OUT_NDJSON) {
		for (size_t i = 0; i < s->findings.n; i++) {
			if (!finding_selected(c, s, &s->findings.v[i]))
				continue;
			json_t *rec = json_pack("{s:s,s:s,s:o}", "type", "finding", "host", cli_host(), "store",
			                        oa_json_str(s->root));
			json_t *fo = oa_report_finding(&s->findings.v[i]);
			json_object_update(rec, fo);
			json_decref(fo);
			oa_json_dump_line(rec, stdout);
			json_decref(rec);
		}
		json_t *rec = json_pack("{s:s,s:s,s:s,s:o}", "type", "summary", "schema", schema, "host", cli_host(),
		                        "store", oa_json_str(s->root));
		json_object_update(rec, summary);
		oa_json_dump_line(rec, stdout);
		json_decref(rec);
		return;
	}
	if (c->format == OUT_JSON) {
		/* One document: {"schema":..., "stores":[...]} written store by store. */
		json_t *so = oa_report_store(s);
		json_t *fv = json_array();
		for (size_t i = 0; i < s->findings.n; i++)
			if (finding_selected(c, s, &s->findings.v[i]))
				json_array_append_new(fv, oa_report_finding(&s->findings.v[i]));
		json_object_set_new(so, "findings", fv);
		json_object_set(so, "summary", summary);
		if (first)
			printf("{\"schema\":\"%s\",\"stores\":[", schema);
		else
			printf(",");
		json_dumpf(so, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(so);
		return;
	}
	/* People: per model, then store-wide, then the summary line. */
	printf("%s%s\n", first ? "" : "\n", s->root);
	for (size_t j = 0; j < s->n_models; j++) {
		const oa_model *m = &s->models[j];
		bool seen = false; /* a legacy anchor has its v2 tag's name: one group for both */
		for (size_t k = 0; k < j && !seen; k++)
			seen = strcmp(s->models[k].display, m->display) == 0;
		if (seen)
			continue;
		bool header = false;
		for (size_t i = 0; i < s->findings.n; i++) {
			const oa_finding *f = &s->findings.v[i];
			if (!f->model || strcmp(f->model, m->display) != 0 || !finding_selected(c, s, f))
				continue;
			if (!header)
				printf("  %s\n", m->display);
			header = true;
			printf("    ");
			cli_print_finding(c, stdout, f);
		}
	}
	bool header = false;
	for (size_t i = 0; i < s->findings.n; i++) {
		const oa_finding *f = &s->findings.v[i];
		if (f->model || !finding_selected(c, s, f))
			continue;
		if (!header)
			printf("  store\n");
		header = true;
		printf("    ");
		cli_print_finding(c, stdout, f);
	}
	printf("%s: %zu error%s, %zu warning%s\n", summary_line, counts[OA_SEV_ERROR],
	       counts[OA_SEV_ERROR] == 1 ? "" : "s", counts[OA_SEV_WARNING],
	       counts[OA_SEV_WARNING] == 1 ? "" : "s");
}

void report_finish(cli *c, const char *schema, bool any)
{
	/* The JSON document is closed here, not after "the last store", so a
	 * store skipped at the end (unreadable, a MODEL it lacks, an interrupt)
	 * cannot leave it open. */
	if (c->format != OUT_JSON)
		return;
	if (any)
		printf("]}\n");
	else
		printf("{\"schema\":\"%s\",\"stores\":[]}\n", schema);
}
