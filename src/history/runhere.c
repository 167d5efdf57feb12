/* runhere.c - the engine and the fit of a model on a machine (runhere.h). */
#include "ollama_audit/runhere.h"
#include "base/platform.h"
#include "base/util.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define MIB (1024ull * 1024ull)

const char *oa_fit_name(enum oa_fit f)
{
	switch (f) {
	case OA_FIT_FITS: return "fits";
	case OA_FIT_TIGHT: return "tight";
	case OA_FIT_NO: return "won't fit";
	default: return "unknown";
	}
}

int oa_meminfo_parse(const char *text, uint64_t *total, uint64_t *available)
{
	const char *t = strstr(text, "MemTotal:"), *a = strstr(text, "MemAvailable:");
	if (!t || !a)
		return -1;
	unsigned long long kt = strtoull(t + 9, NULL, 10), ka = strtoull(a + 13, NULL, 10);
	if (!kt || kt > (1ull << 50) || ka > kt)
		return -1;
	*total = kt * 1024;
	*available = ka * 1024;
	return 0;
}

static bool has_mlxc(const char *dir, char *out, size_t outlen)
{
	DIR *d = opendir(dir);
	if (!d)
		return false;
	bool found = false;
	struct dirent *e;
	while (!found && (e = readdir(d))) {
		if (strncmp(e->d_name, "libmlxc.", 8) != 0)
			continue;
		int n = snprintf(out, outlen, "%s/%s", dir, e->d_name);
		found = n > 0 && (size_t)n < outlen; /* a cut path is not the library's */
	}
	closedir(d);
	return found;
}

static int cmp_desc(const void *a, const void *b)
{
	return -strcmp(*(char *const *)a, *(char *const *)b);
}

/* As the server's loader: OLLAMA_LLM_LIBRARY=mlx_* names the one subdir;
 * otherwise the mlx_* subdirs, highest version first, then the root. */
static bool search_root(oa_machine *mc, const char *root, const char *forced)
{
	if (forced) {
		char *dir = oa_path_join(root, forced);
		bool found = has_mlxc(dir, mc->mlx_lib, sizeof mc->mlx_lib);
		free(dir);
		return found;
	}
	DIR *d = opendir(root);
	if (!d)
		return false;
	char **subs = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		if (strncmp(e->d_name, "mlx_", 4) == 0) {
			subs = oa_xreallocarray(subs, n + 1, sizeof *subs);
			subs[n++] = oa_xstrdup(e->d_name);
		}
	closedir(d);
	if (n)
		qsort(subs, n, sizeof *subs, cmp_desc);
	bool found = false;
	for (size_t i = 0; i < n && !found; i++) {
		char *dir = oa_path_join(root, subs[i]);
		found = has_mlxc(dir, mc->mlx_lib, sizeof mc->mlx_lib);
		free(dir);
	}
	oa_free_names(subs, n);
	return found || has_mlxc(root, mc->mlx_lib, sizeof mc->mlx_lib);
}

/* Where installs put the server: lib/ollama beside its bin/ (install.sh,
 * distributions, Homebrew) and the macOS app bundle's Resources. */
static const char *const install_roots[] = {
	"/usr/local/lib/ollama", "/usr/lib/ollama", "/opt/homebrew/lib/ollama",
	"/Applications/Ollama.app/Contents/Resources/lib/ollama",
	"/Applications/Ollama.app/Contents/Resources",
};

static void find_mlx(oa_machine *mc, const char *llm_library)
{
	const char *forced = llm_library && strncmp(llm_library, "mlx_", 4) == 0 && !strchr(llm_library, '/') ?
	                     llm_library : NULL;
	size_t used = 0;
	for (size_t i = 0; i < sizeof install_roots / sizeof install_roots[0] && !mc->mlx_found; i++) {
		char root[PATH_MAX];
		snprintf(root, sizeof root, "%s%s", mc->root ? mc->root : "", install_roots[i]);
		int k = snprintf(mc->searched + used, sizeof mc->searched - used, "%s%s", used ? ", " : "", root);
		if (k > 0 && (size_t)k < sizeof mc->searched - used)
			used += (size_t)k;
		mc->mlx_found = search_root(mc, root, forced);
	}
	if (!mc->mlx_found)
		mc->mlx_lib[0] = '\0';
}

static void read_memory(oa_machine *mc)
{
	/* Linux's meminfo (MemAvailable counts reclaimable cache, as the
	 * server's own figure does); another root's when it has one. */
	char *path = oa_xasprintf("%s/proc/meminfo", mc->root ? mc->root : "");
	int fd = oa_open_ro(path);
	free(path);
	if (fd >= 0) {
		char *text = oa_xmalloc(65537);
		ssize_t got = oa_pread_full(fd, text, 65536, 0);
		text[got > 0 ? (size_t)got : 0] = '\0';
		mc->mem_known = got > 0 && oa_meminfo_parse(text, &mc->mem_total, &mc->mem_available) == 0;
		free(text);
		close(fd);
	}
	/* Another machine's memory is not ours to measure. */
	if (!mc->mem_known && !mc->root)
		mc->mem_known = oa_memory_info(&mc->mem_total, &mc->mem_available) == 0;
}

void oa_machine_probe(oa_machine *mc, const char *root, const char *llm_library, const char *gpu_overhead)
{
	memset(mc, 0, sizeof *mc);
	mc->root = root && *root ? root : NULL;
	find_mlx(mc, llm_library);
	struct utsname u;
	bool darwin = false, arm = true;
	if (!mc->root && uname(&u) == 0) {
		darwin = strcmp(u.sysname, "Darwin") == 0;
		arm = strcmp(u.machine, "arm64") == 0 || strcmp(u.machine, "aarch64") == 0;
	}
	mc->mlx_platform_ok = !darwin || arm; /* MLX on macOS needs Apple Silicon */
	mc->metal = darwin || strstr(mc->mlx_lib, "metal") != NULL;
	if (gpu_overhead && *gpu_overhead && oa_all_digits(gpu_overhead))
		mc->gpu_overhead = strtoull(gpu_overhead, NULL, 10);
	read_memory(mc);
}

bool oa_runhere_weight_layer(const oa_model *m, size_t i)
{
	enum oa_layer_kind k = m->m.layers[i].kind;
	return m->runner == OA_RUNNER_MLX ? k == OA_LAYER_TENSOR : k == OA_LAYER_MODEL || k == OA_LAYER_PROJECTOR;
}

void oa_runhere_model(const oa_machine *mc, const oa_model *m, oa_runhere *out)
{
	memset(out, 0, sizeof *out);
	if (!m->manifest_ok || (m->runner != OA_RUNNER_LLAMACPP && m->runner != OA_RUNNER_MLX))
		return;
	bool mlx = m->runner == OA_RUNNER_MLX;
	out->engine = mlx ? "mlx" : "llamacpp";
	out->can_run = !mlx || (mc->mlx_found && mc->mlx_platform_ok);
	/* The MLX client weighs the tensor layers; for GGUF the model and
	 * projector weights are the comparable figure. */
	for (size_t i = 0; i < m->m.n_layers; i++)
		if (m->m.layers[i].size > 0 && oa_runhere_weight_layer(m, i))
			out->weights += (uint64_t)m->m.layers[i].size;
	out->reserve = (mc->metal ? 512 : 457) * MIB + mc->gpu_overhead;
	if (!out->can_run || !mc->mem_known)
		return;
	uint64_t avail = mc->mem_available > out->reserve ? mc->mem_available - out->reserve : 0;
	uint64_t total = mc->mem_total > out->reserve ? mc->mem_total - out->reserve : 0;
	out->fit = out->weights <= avail ? OA_FIT_FITS : out->weights <= total ? OA_FIT_TIGHT : OA_FIT_NO;
}

void oa_runhere_findings(const oa_machine *mc, oa_store *s)
{
	for (size_t i = 0; i < s->n_models; i++) {
		const oa_model *m = &s->models[i];
		oa_runhere r;
		oa_runhere_model(mc, m, &r);
		if (m->anchor || m->sibling || !r.engine || r.can_run)
			continue;
		oa_findings_add(&s->findings, OA_FINDING_NO_RUNTIME_FOR_MODEL, m->display, NULL, NULL,
		                "a safetensors model runs only on MLX, and %s", !mc->mlx_platform_ok ?
		                "MLX on macOS needs Apple Silicon" : "no MLX runtime (libmlxc) is installed "
		                "where Ollama installs it");
	}
}
