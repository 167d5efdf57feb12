/* digest.c - sha256 digests as text: parse and compute. */
#include "ollama_audit/digest.h"
#include "base/util.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

bool oa_digest_parse(const char *d, oa_digest_hex hex, bool *uppercase)
{
	if (uppercase)
		*uppercase = false;
	if (!d || strncmp(d, "sha256", 6) != 0 || (d[6] != ':' && d[6] != '-'))
		return false;
	const char *h = d + 7;
	if (strlen(h) != 64 || !oa_is_hex(h, 64))
		return false;
	for (int i = 0; i < 64; i++) {
		char c = h[i];
		if (c >= 'A' && c <= 'F') {
			c = (char)(c - 'A' + 'a');
			if (uppercase)
				*uppercase = true;
		}
		hex[i] = c;
	}
	hex[64] = '\0';
	return true;
}

void oa_sha256_hex(const void *bytes, size_t len, oa_digest_hex hex)
{
	unsigned char md[32];
	unsigned int mdlen = 0;
	if (!EVP_Digest(bytes, len, md, &mdlen, EVP_sha256(), NULL) || mdlen != 32) {
		memset(hex, '0', 64);
		hex[64] = '\0';
		return;
	}
	static const char digits[] = "0123456789abcdef";
	for (int i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}
