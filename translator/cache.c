/* The compiled-object cache: $XDG_CACHE_HOME/stap (else ~/.cache/stap),
 * mode 0700, holding stap_<hash>.c and stap_<hash>.so, and stap_<hash>.sum
 * with the size and SHA-1 of both, written last: an entry whose files do
 * not match it (truncated, overwritten) is damaged, said so, removed and
 * built again, never run; one without it (half written, or of an older
 * stap) is built again too. The hash (SHA-1)
 * covers everything that changes the object: the script, every tapset
 * file read, script arguments, -D/-G/-g/-u, the runtime header, the
 * compiler binary, this translator binary (so a rebuilt translator
 * never reuses objects of an older one) and every probed program and
 * library with its separate debug file and build-id (names, addresses
 * and types come from there), and the headers of @cast's header modules.
 * Files are known by path, device, inode,
 * size, mtime and ctime: a rebuilt or replaced file changes the last
 * ones even when touch(1) gives it the old mtime. Entries that are not
 * ours or not private are ignored, never trusted. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#include "cast_module.h"
#include "emit.h"
#include "probes_process.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "dev"
#endif

/* ---- SHA-1 (FIPS 180-4), enough for a cache key ---- */

struct sha1 {
	uint32_t h[5];
	uint64_t len;
	unsigned char buf[64];
	size_t n;
};

static uint32_t rol(uint32_t x, int k)
{
	return (x << k) | (x >> (32 - k));
}

static void sha1_block(struct sha1 *c, const unsigned char *p)
{
	uint32_t w[80], a = c->h[0], b = c->h[1], d0 = c->h[2], d = c->h[3], e = c->h[4];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20)
			f = (b & d0) | (~b & d), k = 0x5a827999;
		else if (i < 40)
			f = b ^ d0 ^ d, k = 0x6ed9eba1;
		else if (i < 60)
			f = (b & d0) | (b & d) | (d0 & d), k = 0x8f1bbcdc;
		else
			f = b ^ d0 ^ d, k = 0xca62c1d6;
		uint32_t t = rol(a, 5) + f + e + k + w[i];
		e = d, d = d0, d0 = rol(b, 30), b = a, a = t;
	}
	c->h[0] += a, c->h[1] += b, c->h[2] += d0, c->h[3] += d, c->h[4] += e;
}

static void sha1_init(struct sha1 *c)
{
	static const uint32_t iv[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
	memcpy(c->h, iv, sizeof iv);
	c->len = 0;
	c->n = 0;
}

static void sha1_update(struct sha1 *c, const void *data, size_t len)
{
	const unsigned char *p = data;
	c->len += len;
	while (len--) {
		c->buf[c->n++] = *p++;
		if (c->n == 64) {
			sha1_block(c, c->buf);
			c->n = 0;
		}
	}
}

static void sha1_final(struct sha1 *c, char hex[41])
{
	uint64_t bits = c->len * 8;
	unsigned char pad = 0x80, zero = 0, lenb[8];
	sha1_update(c, &pad, 1);
	while (c->n != 56)
		sha1_update(c, &zero, 1);
	for (int i = 0; i < 8; i++)
		lenb[i] = (unsigned char)(bits >> (56 - 8 * i));
	sha1_update(c, lenb, 8);
	for (int i = 0; i < 5; i++)
		sprintf(hex + 8 * i, "%08x", c->h[i]);
}

/* Each item is length-prefixed so "ab"+"c" differs from "a"+"bc". */
static void put(struct sha1 *c, const char *tag, const char *s)
{
	size_t n = s ? strlen(s) : (size_t)-1;
	sha1_update(c, tag, strlen(tag) + 1);
	sha1_update(c, &n, sizeof n);
	if (s)
		sha1_update(c, s, n);
}

static void put_file_id(struct sha1 *c, const char *tag, const char *path)
{
	struct stat st;
	char *id = path && stat(path, &st) == 0
	    ? xasprintf("%s %llu %llu %lld %lld.%09ld %lld.%09ld", path,
			(unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
			(long long)st.st_size, (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			(long long)st.st_ctim.tv_sec, st.st_ctim.tv_nsec)
	    : xstrdup("none");
	put(c, tag, id);
	free(id);
}

/* An opened module: the file, its build-id and the file its DWARF came
 * from (the same file, or one under /usr/lib/debug). */
static void put_module(struct sha1 *c, struct dwq_mod *m)
{
	Dwfl_Module *mod = dwq_dwfl_module(m);
	const unsigned char *bits;
	GElf_Addr vaddr;
	const char *mainfile = NULL, *debugfile = NULL;
	int n = dwfl_module_build_id(mod, &bits, &vaddr);
	struct strbuf b = {0};
	for (int i = 0; i < n; i++)
		sb_printf(&b, "%02x", bits[i]);
	put_file_id(c, "module", dwq_path(m));
	put(c, "build-id", sb_str(&b));
	free(sb_take(&b));
	dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, &mainfile, &debugfile);
	put_file_id(c, "debuginfo", debugfile);
}

static void put_file_text(struct sha1 *c, const char *tag, const char *path)
{
	char *text = read_file(path, NULL);
	put(c, tag, text ? text : "");
	free(text);
}

/* The compiler binary as found on $PATH. */
static char *find_in_path(const char *prog)
{
	const char *path = getenv("PATH");
	if (strchr(prog, '/') || !path)
		return xstrdup(prog);
	char *copy = xstrdup(path);
	for (char *dir = strtok(copy, ":"); dir; dir = strtok(NULL, ":")) {
		char *p = xasprintf("%s/%s", dir, prog);
		if (access(p, X_OK) == 0) {
			free(copy);
			return p;
		}
		free(p);
	}
	free(copy);
	return xstrdup(prog);
}

/* "SIZE SHA1\n" of a file's contents (malloc'd), NULL if unreadable. */
static char *file_sum(const char *path)
{
	size_t len;
	char *data = read_file(path, &len), hex[41];
	if (!data)
		return NULL;
	struct sha1 c;
	sha1_init(&c);
	sha1_update(&c, data, len);
	sha1_final(&c, hex);
	free(data);
	return xasprintf("%zu %s\n", len, hex);
}

/* What the .sum file of an entry with these files says. */
static char *entry_sum(const char *cfile, const char *sofile)
{
	char *a = file_sum(cfile), *b = a ? file_sum(sofile) : NULL;
	char *text = b ? xasprintf("stap-cache-sum 1\n%s%s", a, b) : NULL;
	free(a);
	free(b);
	return text;
}

static char hash_hex[41];

const char *cache_hash(struct session *s)
{
	struct sha1 c;
	struct stapfile *f;
	const char *a;
	struct define *d;
	struct gset *g;

	sha1_init(&c);
	put(&c, "version", PACKAGE_VERSION " emit-1");
	put_file_id(&c, "translator", "/proc/self/exe");
	/* Messages carry the script's name; %( kernel_v %) conditions the
	 * running kernel. */
	if (s->user_file && s->user_file->src) {
		put(&c, "name", s->user_file->src->name);
		put(&c, "script", s->user_file->src->text);
	} else
		put(&c, "script", s->script_text);
	vec_foreach (struct stapfile *, f, &s->extra_files)
		if (f->src)
			put(&c, "extra", f->src->text);
	vec_foreach (struct stapfile *, f, &s->library_files)
		if (f->src) {
			put(&c, "tapset", f->src->name);
			put(&c, "text", f->src->text);
		}
	vec_foreach (const char *, a, &s->args)
		put(&c, "arg", a);
	vec_foreach (struct define *, d, &s->defines) {
		put(&c, "D", d->name);
		put(&c, "=", d->value);
	}
	vec_foreach (struct gset *, g, &s->gsets) {
		put(&c, "G", g->name);
		put(&c, "=", g->value);
	}
	struct utsname u;
	if (uname(&u) == 0) {
		put(&c, "kernel", u.release);
		put(&c, "arch", u.machine);
	}
	/* Process probes hold addresses in the programs and libraries they
	 * probe: a rebuilt binary must not reuse an object of the old one. */
	struct derived_probe *dp;
	vec_foreach (struct derived_probe *, dp, &s->probes) {
		if (dp->module)
			put_file_id(&c, "probed", dp->module);
		if (dp->library)
			put_file_id(&c, "probed-lib", dp->library);
	}
	struct dwq_mod *m;
	vec_foreach (struct dwq_mod *, m, proc_opened_modules())
		put_module(&c, m);
	/* @cast's header modules: the types come from those files */
	vec_foreach (const char *, a, cast_module_files())
		put_file_id(&c, "cast-header", a);
	put(&c, "g", s->guru ? "1" : "0");
	put(&c, "u", s->unoptimized ? "1" : "0");
	/* options that change the generated C or how it is compiled */
	put(&c, "t", s->timing ? "1" : "0");
	put(&c, "she", s->suppress_handler_errors ? "1" : "0");
	put(&c, "stl", s->suppress_time_limits ? "1" : "0");
	put(&c, "ngvd", s->no_global_var_display ? "1" : "0");
	put(&c, "compat", s->compat_version ? s->compat_version : "");
	put(&c, "release", s->kernel_release ? s->kernel_release : "");
	vec_foreach (const char *, a, &s->cflags)
		put(&c, "B", a);
	if (s->runtime_include_dir) {
		char *h = xasprintf("%s/stap_runtime.h", s->runtime_include_dir);
		put_file_text(&c, "runtime", h);
		free(h);
	}
	const char *cc = getenv("CC");
	char *ccpath = find_in_path(cc && *cc && !strpbrk(cc, " \t") ? cc : "gcc");
	put_file_id(&c, "cc", ccpath);
	free(ccpath);
	sha1_final(&c, hash_hex);
	s->module_name = xasprintf("stap_%.32s", hash_hex);
	return hash_hex;
}

const char *cache_default_dir(void)
{
	const char *x = getenv("XDG_CACHE_HOME");
	if (x && *x == '/')
		return xasprintf("%s/stap", x);
	const char *home = getenv("HOME");
	if (home && *home)
		return xasprintf("%s/.cache/stap", home);
	return NULL;
}

/* Ours, the right kind, and not writable by anyone else. */
static int private_entry(const char *path, int want_dir)
{
	struct stat st;
	if (lstat(path, &st) != 0)
		return 0;
	if (want_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
		return 0;
	if (st.st_uid != geteuid())
		return 0;
	return (st.st_mode & 022) == 0;
}

static char *entry(const struct session *s, const char *ext)
{
	return xasprintf("%s/%s.%s", s->cache_dir, s->module_name, ext);
}

int cache_lookup(struct session *s)
{
	if (!s->cache_dir || s->poison_cache) /* --poison-cache: written, never read */
		return 0;
	cache_hash(s);
	if (!private_entry(s->cache_dir, 1)) {
		debug(DBG_CACHE, "cache directory %s missing or not private", s->cache_dir);
		return 0;
	}
	char *c = entry(s, "c"), *so = entry(s, "so"), *sum = entry(s, "sum");
	if (!private_entry(c, 0) || !private_entry(so, 0)) {
		debug(DBG_CACHE, "no usable cache entry %s", so);
		free(c);
		free(so);
		free(sum);
		return 0;
	}
	char *want = private_entry(sum, 0) ? read_file(sum, NULL) : NULL;
	char *have = want ? entry_sum(c, so) : NULL;
	int intact = have && !strcmp(want, have);
	free(have);
	if (!intact) {
		/* no sum: an entry of an older stap, or one left half written */
		if (want)
			fprintf(stderr,
				"WARNING: cached object '%s' is damaged: compiling it again\n", so);
		else
			debug(DBG_CACHE, "cache entry %s has no sum: compiling it again", so);
		free(want);
		unlink(sum);
		unlink(so);
		unlink(c);
		free(c);
		free(so);
		free(sum);
		return 0;
	}
	free(want);
	free(sum);
	s->c_file = c;
	s->object_file = so;
	s->cache_hit = 1;
	if (s->verbose >= 1) {
		fprintf(stderr, "Pass 3: using cached %s\n", c);
		if (s->last_pass >= 4)
			fprintf(stderr, "Pass 4: using cached %s\n", so);
	}
	if (s->last_pass == 3) {
		char *text = read_file(c, NULL);
		if (text)
			fputs(text, stdout);
		free(text);
	} else if (s->last_pass == 4) {
		printf("%s\n", so);
	}
	return 1;
}

static int mkdirs(const char *dir)
{
	char *p = xstrdup(dir);
	for (char *q = p + 1; *q; q++) {
		if (*q != '/')
			continue;
		*q = 0;
		if (mkdir(p, 0700) != 0 && errno != EEXIST) {
			free(p);
			return -1;
		}
		*q = '/';
	}
	int rc = mkdir(p, 0700) != 0 && errno != EEXIST ? -1 : 0;
	free(p);
	return rc;
}

/* Write DATA into the cache as TO, atomically (temp file + rename). */
static int store_data(const char *data, size_t len, const char *to, mode_t mode)
{
	char *tmp = xasprintf("%s.XXXXXX", to);
	int fd = mkstemp(tmp);
	int ok = fd >= 0;
	for (size_t off = 0; ok && off < len;) {
		ssize_t w = write(fd, data + off, len - off);
		if (w <= 0)
			ok = 0;
		else
			off += (size_t)w;
	}
	if (fd >= 0) {
		if (fchmod(fd, mode) != 0)
			ok = 0;
		if (close(fd) != 0)
			ok = 0;
	}
	if (ok && rename(tmp, to) != 0)
		ok = 0;
	if (!ok && fd >= 0)
		unlink(tmp);
	free(tmp);
	return ok ? 0 : -1;
}

static int store_one(const char *from, const char *to, mode_t mode)
{
	size_t len;
	char *data = read_file(from, &len);
	int rc = data ? store_data(data, len, to, mode) : -1;
	free(data);
	return rc;
}

void cache_store(struct session *s)
{
	if (!s->cache_dir || s->cache_hit || !s->c_file || !s->object_file || !s->module_name)
		return;
	if (mkdirs(s->cache_dir) != 0 || !private_entry(s->cache_dir, 1)) {
		debug(DBG_CACHE, "cannot use cache directory %s", s->cache_dir);
		return;
	}
	char *c = entry(s, "c"), *so = entry(s, "so"), *sum = entry(s, "sum");
	if (strcmp(s->object_file, so) == 0)
		return; /* already stored */
	char *text = entry_sum(s->c_file, s->object_file);
	unlink(sum); /* the entry is whole again only once its sum is there */
	if (text && store_one(s->c_file, c, 0600) == 0 &&
	    store_one(s->object_file, so, 0700) == 0 &&
	    store_data(text, strlen(text), sum, 0600) == 0) {
		if (s->verbose >= 2)
			fprintf(stderr, "Copying %s to %s\n", s->object_file, so);
		s->object_file = so;
	} else {
		debug(DBG_CACHE, "could not store %s", so);
	}
	free(text);
}

/* --clean-cache: every entry of the cache goes (nothing else there). */
int cache_clean(const struct session *s)
{
	if (!s->cache_dir || !private_entry(s->cache_dir, 1))
		return 0;
	DIR *d = opendir(s->cache_dir);
	if (!d)
		return 0;
	struct dirent *de;
	int n = 0;
	while ((de = readdir(d))) {
		const char *dot = strrchr(de->d_name, '.');
		if (strncmp(de->d_name, "stap_", 5) || !dot ||
		    (strcmp(dot, ".c") && strcmp(dot, ".so")))
			continue;
		char *path = xasprintf("%s/%s", s->cache_dir, de->d_name);
		if (private_entry(path, 0) && unlink(path) == 0)
			n++;
		free(path);
	}
	closedir(d);
	if (s->verbose >= 1)
		fprintf(stderr, "Removed %d cache entr%s from %s\n", n, n == 1 ? "y" : "ies",
			s->cache_dir);
	return 0;
}
