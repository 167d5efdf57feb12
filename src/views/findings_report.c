/* findings_report.c - check and verify documents and records (findings_report.h). */
#include "ollama_audit/findings_report.h"
#include "ollama_audit/records.h"
#include "ollama_audit/report.h"

json_t *oa_findings_store_json(const oa_store *s, const bool *selected, const oa_audit_summary *sum)
{
	json_t *so = oa_report_store(s);
	json_t *fv = json_array();
	for (size_t i = 0; i < s->findings.n; i++)
		if (!selected || selected[i])
			json_array_append_new(fv, oa_report_finding(&s->findings.v[i]));
	json_object_set_new(so, "findings", fv);
	json_object_set_new(so, "summary", oa_audit_summary_json(sum));
	return so;
}

json_t *oa_finding_record(const oa_store *s, const oa_finding *f, const char *host)
{
	json_t *fo = oa_report_finding(f);
	json_t *rec = oa_store_record("finding", NULL, host, s, fo);
	json_decref(fo);
	return rec;
}

json_t *oa_audit_summary_record(const oa_store *s, const char *schema, const char *host,
                                const oa_audit_summary *sum)
{
	json_t *so = oa_audit_summary_json(sum);
	json_t *rec = oa_store_record("summary", schema, host, s, so);
	json_decref(so);
	return rec;
}
