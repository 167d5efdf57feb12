/* scan.c - read a store, then classify its models. */
#include "ollama_audit/scan.h"
#include "ollama_audit/discover.h"
#include "ollama_audit/headers.h"
#include "ollama_audit/model.h"
#include "store/headers_private.h"
#include "base/platform.h"
#include "base/util.h"

#include <stdlib.h>

void oa_store_scan(oa_store *s)
{
	double t0 = oa_now();
	oa_store_read(s);
	oa_headers_begin(s);
	store_headers_prefetch(s);
	for (size_t i = 0; i < s->n_models; i++)
		oa_model_classify(s, &s->models[i]);
	oa_headers_end(s);
	s->scan_seconds = oa_now() - t0;
	if (!s->owner) { /* every report names it: looked up once, with the store */
		char name[256];
		oa_user_name(s->root_st.st_uid, name, sizeof name);
		s->owner = oa_xstrdup(name);
	}
}

void oa_store_close(oa_store *s)
{
	free(s->owner);
	s->owner = NULL;
	for (size_t i = 0; i < s->n_models; i++)
		oa_model_free(&s->models[i]);
	oa_store_release(s);
}
