/* bench_gguf.c - times oa_gguf_read_path over files and prints one JSON line per file with
 * the facts the oracle (gguf_oracle.mjs) also reports. Built by bench_gguf.sh; not a ctest.
 *   bench_gguf [-n ITERS] FILE...      FULL-mode walks, min and median ms
 *   bench_gguf -q FILE...              QUICK mode: bytes consumed and bytes read
 *   bench_gguf -r FILE                 one FULL walk, then print peak RSS (getrusage) */
#include "ollama_audit/gguf.h"
#include "base/platform.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void jstr(const char *s)
{
	if (!s) {
		fputs("null", stdout);
		return;
	}
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20)
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

int main(int argc, char **argv)
{
	int iters = 20, opt;
	bool quick = false, rss = false;
	while ((opt = getopt(argc, argv, "n:qr")) != -1) {
		if (opt == 'n')
			iters = atoi(optarg) > 0 ? atoi(optarg) : 1;
		else if (opt == 'q')
			quick = true;
		else if (opt == 'r')
			rss = true;
		else
			return 2;
	}
	for (int f = optind; f < argc; f++) {
		const char *path = argv[f];
		oa_gguf_info in;
		if (quick) {
			int rc = oa_gguf_read_path(path, OA_GGUF_QUICK, &in);
			printf("{\"file\":");
			jstr(path);
			printf(",\"rc\":%d,\"quick_stopped\":%s,\"header_bytes_read\":%" PRIu64
			       ",\"io_bytes_read\":%" PRIu64 ",\"kv_parsed\":%" PRIu64 "}\n", rc,
			       in.quick_stopped ? "true" : "false", in.header_bytes_read, in.io_bytes_read,
			       in.kv_parsed);
			oa_gguf_info_free(&in);
			continue;
		}
		int n = rss ? 1 : iters;
		double *t = calloc((size_t)n, sizeof *t);
		int rc = 0;
		for (int i = 0; i < n; i++) {
			double t0 = oa_now();
			rc = oa_gguf_read_path(path, OA_GGUF_FULL, &in);
			t[i] = (oa_now() - t0) * 1e3;
			if (i + 1 < n)
				oa_gguf_info_free(&in);
		}
		qsort(t, (size_t)n, sizeof *t, cmp_d);
		char hn[32];
		oa_human_number(in.parameter_count, hn, sizeof hn);
		printf("{\"file\":");
		jstr(path);
		printf(",\"rc\":%d,\"ms_min\":%.3f,\"ms_median\":%.3f,\"iters\":%d,\"version\":%u,"
		       "\"big_endian\":%s,\"kv_count\":%" PRIu64 ",\"tensor_count\":%" PRIu64
		       ",\"arch\":", rc, t[0], t[n / 2], n, in.version, in.big_endian ? "true" : "false",
		       in.kv_count, in.tensor_count);
		jstr(in.architecture);
		printf(",\"vocab\":%" PRIu64 ",\"file_type\":", in.vocab_size);
		if (in.has_file_type)
			printf("%u", in.file_type);
		else
			printf("null");
		printf(",\"params\":%" PRIu64 ",\"params_human\":\"%s\",\"data_offset\":%" PRIu64
		       ",\"header_bytes_read\":%" PRIu64 ",\"io_bytes_read\":%" PRIu64
		       ",\"warnings\":%zu,\"errors\":%zu", in.parameter_count, hn, in.data_offset,
		       in.header_bytes_read, in.io_bytes_read, in.n_warnings, in.n_errors);
		if (rss) {
			struct rusage ru;
			getrusage(RUSAGE_SELF, &ru);
			printf(",\"maxrss_kb\":%ld", ru.ru_maxrss);
		}
		printf("}\n");
		for (size_t i = 0; i < in.n_diags && i < 5; i++)
			fprintf(stderr, "  %s: [%d] %s\n", path, in.diags[i].severity, in.diags[i].message);
		oa_gguf_info_free(&in);
		free(t);
	}
	return 0;
}
