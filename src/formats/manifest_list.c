/* manifest_list.c - a manifest list's child for a platform (manifest_list.h). */
#include "ollama_audit/manifest_list.h"

#include <string.h>
#include <sys/utsname.h>

const char *oa_platform_default(void)
{
	struct utsname u;
	if (uname(&u) < 0)
		return "linux/amd64";
	bool arm = strcmp(u.machine, "arm64") == 0 || strcmp(u.machine, "aarch64") == 0;
	if (strcmp(u.sysname, "Darwin") == 0)
		return arm ? "darwin/arm64" : "darwin/amd64";
	if (strcmp(u.sysname, "Linux") == 0)
		return arm ? "linux/arm64" : "linux/amd64";
	return arm ? "other/arm64" : "other/amd64";
}

static bool word(const char *s, size_t n)
{
	if (n == 0 || n > 32)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

bool oa_platform_valid(const char *p)
{
	const char *slash = p ? strchr(p, '/') : NULL;
	return slash && word(p, (size_t)(slash - p)) && word(slash + 1, strlen(slash + 1));
}

long oa_list_select(const oa_manifest *list, const bool *usable, const char *platform)
{
	static const char *const apple[] = { "mlx", "llamacpp", "ggml" };
	static const char *const others[] = { "llamacpp", "ggml", "mlx" };
	const char *const *pref = platform && strcmp(platform, "darwin/arm64") == 0 ? apple : others;
	for (size_t p = 0; p < 3; p++)
		for (size_t i = 0; i < list->n_manifests; i++)
			if ((!usable || usable[i]) && strcmp(list->entries[i].runner, pref[p]) == 0)
				return (long)i;
	return -1;
}

const char *oa_runner_label_for_format(const char *model_format)
{
	if (!model_format || !*model_format || strcmp(model_format, "gguf") == 0 ||
	    strcmp(model_format, "ggml") == 0)
		return "ggml";
	if (strcmp(model_format, "safetensors") == 0)
		return "mlx";
	return NULL;
}
