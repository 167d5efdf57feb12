/* A program built against the installed library: open the store named on
 * the command line, check it (oa_store_scan), say what it found, close it. */
#include <ollama_audit/finding.h>
#include <ollama_audit/scan.h>
#include <ollama_audit/store.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	oa_store s;
	char err[512];
	if (argc != 2 || oa_store_open(&s, argv[1], "argument", err, sizeof err) != 0) {
		fprintf(stderr, "consumer: %s\n", argc == 2 ? err : "usage: consumer STORE");
		return 1;
	}
	oa_store_scan(&s);
	printf("%zu models, %zu errors\n", s.n_models, oa_findings_count(&s.findings, OA_SEV_ERROR));
	oa_store_close(&s);
	return 0;
}
