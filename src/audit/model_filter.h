/* model_filter.h - --filter EXPR of list, du and rm, as `hf cache ls` takes
 * them ('size>1GB', 'modified>30d', 'used>90d', 'format=safetensors',
 * 'runner=mlx'), and the models rm plans for a selection (library-internal).
 * Every filter given must hold. */
#ifndef OA_AUDIT_MODEL_FILTER_H
#define OA_AUDIT_MODEL_FILTER_H

#include "ollama_audit/log_usage.h"
#include "ollama_audit/store.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum oa_filter_key {
	OA_FILTER_SIZE,     /* list's SIZE (Ollama's): a cloud stub has none and matches no size */
	OA_FILTER_MODIFIED, /* the age of the manifest (list's MODIFIED) */
	OA_FILTER_USED,     /* the age of the last use: a load in the logs or a pull (--unused-for's rule) */
	OA_FILTER_FORMAT,   /* list's FORMAT */
	OA_FILTER_RUNNER,   /* list's RUNNER */
};
enum oa_filter_op { OA_FILTER_GT, OA_FILTER_GE, OA_FILTER_LT, OA_FILTER_LE, OA_FILTER_EQ, OA_FILTER_NE };

typedef struct oa_model_filter {
	enum oa_filter_key key;
	enum oa_filter_op op;
	int64_t num;     /* size: bytes; modified, used: an age in ns */
	char word[16];   /* format, runner: the value, lower case */
} oa_model_filter;

/* The words the documentation and the completion offer. */
#define OA_FILTER_KEYS "size, modified, used, format, runner"
#define OA_FILTER_FORMATS "gguf safetensors remote mixed unknown invalid"
#define OA_FILTER_RUNNERS "llamacpp ggml ollama mlx remote none"

/* Parse KEY OP VALUE ('size>1GB', 'used >= 90d', 'runner=mlx'): 0, or -1
 * with err naming the part that is wrong (the key, the operator, the value). */
int oa_model_filter_parse(const char *text, oa_model_filter *f, char *err, size_t errlen);
/* Whether a filter asks what the logs say (used). */
bool oa_model_filters_need_logs(const oa_model_filter *v, size_t n);
/* Does model idx of s pass every filter (u: the store's logs, or NULL:
 * used then matches nothing; now_ns: the time the ages are taken at)? */
bool oa_model_filters_pass(const oa_model_filter *v, size_t n, const oa_store *s, size_t idx,
                           const oa_log_usage *u, int64_t now_ns);

#endif
