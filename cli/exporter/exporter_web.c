// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * vnetctl exporter --web-config FILE: the exporter's TLS certificate and
 * basic auth users, in the format of the Prometheus exporter toolkit's web
 * configuration (node_exporter's --web.config.file):
 *
 *   tls_server_config:
 *     cert_file: PATH      (a relative PATH is from FILE's directory)
 *     key_file: PATH
 *     client_auth_type: RequireAndVerifyClientCert | VerifyClientCertIfGiven
 *                       | NoClientCert
 *     client_ca_file: PATH
 *   basic_auth_users:
 *     NAME: BCRYPT-HASH
 *
 * Only that subset of YAML is read, and strictly: two levels of block
 * mappings, plain or quoted scalars, comments and blank lines.  Anything
 * else (an unknown or unsupported key, a tab, an indentation that changes
 * within a section, a hash that is not bcrypt, a certificate or key GnuTLS
 * cannot load, a key that is not the certificate's) is an error naming the
 * file, the line and the fix, and the exporter does not start.
 */
#include <crypt.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

#include "base/util.h"
#include "exporter_web.h"

#define LINE_MAX_LEN 4096
#define PEM_MAX (1 << 20)
/* TLS 1.2 and 1.3, as the exporter toolkit's default min_version */
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"
#define HASH_FIX                                                                \
	"make one with `htpasswd -nBC 10 \"\" | tr -d ':\\n'` (apache2-utils) " \
	"or `mkpasswd -m bcrypt` (whois) and put it after the name"

enum section { SEC_NONE, SEC_TLS, SEC_USERS };

struct parse {
	const char *file;
	int line;
	enum section sec;
	int indent;   /* the section's keys' indentation; 0: none yet */
	bool content; /* a line other than a comment came */
	int tls_line, users_line, cert_line, key_line, ca_line, client_line;
	char *cert_file, *key_file, *ca_file;
	struct web_config *w;
};

/* "Error: FILE:LINE: MSG"; 1 */
static int bad_at(const struct parse *p, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad_at(const struct parse *p, int line, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return cli_error("web config %s:%d: %s", p->file, line, msg);
}

/*
 * S, a value with what follows it on its line, made the scalar itself: a
 * quoted one (no escapes) or a plain one up to a comment.  NULL, or why not.
 */
static const char *scalar(char *s)
{
	char *end, *rest;

	if (*s == '"' || *s == '\'') {
		end = strchr(s + 1, *s);
		if (!end)
			return "a quote that is not closed: close it on the same line";
		if (*s == '"' && memchr(s + 1, '\\', (size_t)(end - s - 1)))
			return "a backslash escape in double quotes is not supported: use single quotes";
		rest = end + 1 + strspn(end + 1, " ");
		if (*rest && *rest != '#')
			return "text after the closing quote: remove it, or start a comment with ' #'";
		memmove(s, s + 1, (size_t)(end - s - 1));
		s[end - s - 1] = '\0';
		return NULL;
	}
	if (*s && strchr("[]{}|>&*!%@`", *s))
		return "only plain or quoted values are supported (no flow collections, block scalars, anchors or tags): write the value on the key's line";
	for (end = s; *end; end++)
		if (*end == '#' && (end == s || end[-1] == ' ')) {
			*end = '\0';
			break;
		}
	end = s + strlen(s);
	while (end > s && end[-1] == ' ')
		*--end = '\0';
	return NULL;
}

/* LINE split at its key's colon into *KEY and *VAL; NULL, or why not */
static const char *split(char *line, char **key, char **val)
{
	char *colon = line, *q;
	const char *why;

	*key = line;
	if (*line == '"' || *line == '\'') {
		q = strchr(line + 1, *line);
		if (!q || q[1] != ':')
			return "a quoted key must be followed by ':' at once";
		*q = '\0';
		*key = line + 1;
		colon = q + 1;
	} else {
		while ((colon = strchr(colon, ':')) && colon[1] &&
		       colon[1] != ' ')
			colon++;
		if (!colon)
			return "expected 'key: value' or 'section:' (a key, a colon, a space)";
	}
	*colon = '\0';
	*val = colon + 1 + strspn(colon + 1, " ");
	if (**val == '#')
		**val = '\0';
	why = scalar(*val);
	if (!why && !**key)
		why = "an empty key";
	return why;
}

static int top_key(struct parse *p, const char *key, const char *val)
{
	int *seen;

	if (!strcmp(key, "tls_server_config")) {
		p->sec = SEC_TLS;
		seen = &p->tls_line;
	} else if (!strcmp(key, "basic_auth_users")) {
		p->sec = SEC_USERS;
		seen = &p->users_line;
	} else if (!strcmp(key, "http_server_config")) {
		return bad_at(p, p->line,
			      "http_server_config is not supported by vnetctl exporter (it serves HTTP/1.1 with its own headers): remove the section");
	} else {
		return bad_at(p, p->line,
			      "unknown key '%s': the sections are tls_server_config and basic_auth_users (a key of a section is indented under it)",
			      key);
	}
	if (*seen)
		return bad_at(p, p->line,
			      "a second %s (the first is on line %d): merge them into one",
			      key, *seen);
	if (*val)
		return bad_at(p, p->line,
			      "%s takes its keys on the lines below, indented ('%s:' alone on its line)",
			      key, key);
	*seen = p->line;
	p->indent = 0;
	return 0;
}

static const char *const tls_unsupported[] = {
	"client_allowed_sans",
	"cert",
	"key",
	"min_version",
	"max_version",
	"cipher_suites",
	"curve_preferences",
	"prefer_server_cipher_suites",
	NULL,
};

static int client_auth_type(struct parse *p, const char *val)
{
	if (p->client_line)
		return bad_at(p, p->line,
			      "a second client_auth_type (the first is on line %d): keep one",
			      p->client_line);
	p->client_line = p->line;
	if (!strcmp(val, "RequireAndVerifyClientCert"))
		p->w->client_auth = CLIENT_REQUIRE;
	else if (!strcmp(val, "VerifyClientCertIfGiven"))
		p->w->client_auth = CLIENT_VERIFY_IF_GIVEN;
	else if (!strcmp(val, "RequestClientCert") ||
		 !strcmp(val, "RequireAnyClientCert"))
		return bad_at(p, p->line,
			      "client_auth_type %s is not supported by vnetctl exporter (it does not verify the certificate): use RequireAndVerifyClientCert",
			      val);
	else if (strcmp(val, "NoClientCert"))
		return bad_at(p, p->line,
			      "client_auth_type '%s': expected RequireAndVerifyClientCert, VerifyClientCertIfGiven or NoClientCert",
			      val);
	return 0;
}

static int tls_key(struct parse *p, const char *key, const char *val)
{
	char **dst = NULL;
	int *line = NULL;

	if (!strcmp(key, "cert_file")) {
		dst = &p->cert_file;
		line = &p->cert_line;
	} else if (!strcmp(key, "key_file")) {
		dst = &p->key_file;
		line = &p->key_line;
	} else if (!strcmp(key, "client_ca_file")) {
		dst = &p->ca_file;
		line = &p->ca_line;
	} else if (!strcmp(key, "client_auth_type")) {
		return client_auth_type(p, val);
	}
	for (int i = 0; !dst && tls_unsupported[i]; i++)
		if (!strcmp(key, tls_unsupported[i]))
			return bad_at(p, p->line,
				      "tls_server_config: %s is not supported by vnetctl exporter (it takes cert_file, key_file, client_auth_type and client_ca_file; TLS 1.2 and 1.3): remove it",
				      key);
	if (!dst)
		return bad_at(p, p->line,
			      "tls_server_config: unknown key '%s': the keys are cert_file, key_file, client_auth_type and client_ca_file",
			      key);
	if (*dst)
		return bad_at(p, p->line,
			      "a second %s (the first is on line %d): keep one",
			      key, *line);
	*dst = strdup(val);
	*line = p->line;
	return *dst ? 0 : bad_at(p, p->line, "out of memory");
}

/* NULL when H is a bcrypt hash this libcrypt takes; else what is wrong */
static const char *not_bcrypt(const char *h)
{
	static const char b64[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
	int cost;

	if (strncmp(h, "$2", 2) || !h[2] || !strchr("aby", h[2]) || h[3] != '$')
		return "it is not a bcrypt hash (those start with $2a$, $2b$ or $2y$)";
	if (!isdigit((unsigned char)h[4]) || !isdigit((unsigned char)h[5]) ||
	    h[6] != '$')
		return "its cost is not two digits between the second and third '$'";
	cost = (h[4] - '0') * 10 + (h[5] - '0');
	if (cost < 4 || cost > 31)
		return "its cost is not from 04 to 31";
	if (strlen(h) != 60 || strspn(h + 7, b64) != 53)
		return "it is not 60 characters of bcrypt's alphabet (cut short or mangled?)";
	if (crypt_checksalt(h) != CRYPT_SALT_OK)
		return "this system's libcrypt does not take it";
	return NULL;
}

static int user_key(struct parse *p, const char *name, const char *hash)
{
	struct web_config *w = p->w;
	struct web_user *u;
	const char *why;

	if (strchr(name, ':'))
		return bad_at(p, p->line,
			      "basic_auth_users: the name '%s' has a ':', which basic auth cannot send: rename it",
			      name);
	for (int i = 0; i < w->n_users; i++)
		if (!strcmp(w->users[i].name, name))
			return bad_at(p, p->line,
				      "basic_auth_users: a second '%s': keep one",
				      name);
	why = not_bcrypt(hash);
	if (why)
		return bad_at(p, p->line,
			      "basic_auth_users: the hash of '%s': %s: %s",
			      name, why, HASH_FIX);
	u = realloc(w->users, sizeof(*u) * (size_t)(w->n_users + 1));
	if (!u)
		return bad_at(p, p->line, "out of memory");
	w->users = u;
	u[w->n_users] = (struct web_user){ strdup(name), strdup(hash) };
	if (!u[w->n_users].name || !u[w->n_users].hash)
		return bad_at(p, p->line, "out of memory");
	w->n_users++;
	return 0;
}

static int parse_line(struct parse *p, char *line)
{
	size_t n = strlen(line);
	int indent = (int)strspn(line, " ");
	char *key, *val;
	const char *why;

	while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (line[indent] == '\t')
		return bad_at(p, p->line,
			      "a tab in the indentation: YAML indents with spaces only");
	if (!line[indent] || line[indent] == '#')
		return 0;
	if (!p->content && !strcmp(line, "---")) {
		p->content = true;
		return 0;
	}
	p->content = true;
	why = split(line + indent, &key, &val);
	if (why)
		return bad_at(p, p->line, "%s", why);
	if (!indent)
		return top_key(p, key, val);
	if (p->sec == SEC_NONE)
		return bad_at(p, p->line,
			      "'%s' is indented outside a section: put it under tls_server_config: or basic_auth_users:",
			      key);
	if (!p->indent)
		p->indent = indent;
	if (indent != p->indent)
		return bad_at(p, p->line,
			      "indented by %d spaces where this section's first key has %d: indent its keys alike (nothing nests deeper)",
			      indent, p->indent);
	if (!*val)
		return bad_at(p, p->line,
			      "'%s' has no value: write it after the colon, on the same line",
			      key);
	return p->sec == SEC_TLS ? tls_key(p, key, val) : user_key(p, key, val);
}

/* PATH (from FILE's directory when relative) read whole into *OUT */
static int read_pem(const struct parse *p, const char *path, int line,
		    const char *what, char **out)
{
	char full[PATH_MAX];
	const char *slash = strrchr(p->file, '/');
	char *shrunk;
	size_t n = 0;
	FILE *f;
	int err;

	if (path[0] != '/' && slash)
		snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - p->file),
			 p->file, path);
	else
		snprintf(full, sizeof(full), "%s", path);
	*out = calloc(1, PEM_MAX + 1);
	f = *out ? fopen(full, "re") : NULL;
	if (!f) {
		err = errno;
		return bad_at(p, line,
			      "%s %s: %s (the path, or the exporter's right to read it)",
			      what, full, strerror(err));
	}
	n = fread(*out, 1, PEM_MAX + 1, f);
	err = ferror(f) ? errno : 0;
	fclose(f);
	if (err)
		return bad_at(p, line, "%s %s: %s", what, full, strerror(err));
	if (n > PEM_MAX)
		return bad_at(p, line,
			      "%s %s: larger than %d bytes: not a PEM file",
			      what, full, PEM_MAX);
	(*out)[n] = '\0';
	shrunk = realloc(*out, n + 1);
	if (shrunk)
		*out = shrunk;
	return 0;
}

/* PEM, the certificates named by KEY (PATH, on LINE); the first's expiry */
static int check_certs(const struct parse *p, const char *pem, int line,
		       const char *key, const char *path)
{
	gnutls_datum_t d = { (unsigned char *)pem, (unsigned int)strlen(pem) };
	gnutls_x509_crt_t *crts = NULL;
	unsigned int n = 0;
	time_t until;
	int ret;

	ret = gnutls_x509_crt_list_import2(&crts, &n, &d, GNUTLS_X509_FMT_PEM,
					   0);
	if (ret < 0)
		return bad_at(p, line,
			      "%s %s is not a PEM certificate (%s): it should hold '-----BEGIN CERTIFICATE-----' blocks%s",
			      key, path, gnutls_strerror(ret),
			      strcmp(key, "cert_file") ?
				      "" :
				      ", the server's first");
	until = gnutls_x509_crt_get_expiration_time(crts[0]);
	if (until != (time_t)-1 && until < time(NULL))
		fprintf(stderr,
			"%s exporter: warning: %s:%d: %s %s expired at %s",
			prog_name, p->file, line, key, path, ctime(&until));
	for (unsigned int i = 0; i < n; i++)
		gnutls_x509_crt_deinit(crts[i]);
	gnutls_free(crts);
	return 0;
}

/* the certificate, the key, and that they are a pair, as MHD loads them */
static int check_tls(const struct parse *p)
{
	gnutls_datum_t cd = { (unsigned char *)p->w->cert, 0 };
	gnutls_datum_t kd = { (unsigned char *)p->w->key, 0 };
	gnutls_certificate_credentials_t cred;
	gnutls_x509_privkey_t key;
	int ret;

	cd.size = (unsigned int)strlen(p->w->cert);
	kd.size = (unsigned int)strlen(p->w->key);
	if (check_certs(p, p->w->cert, p->cert_line, "cert_file",
			p->cert_file) ||
	    (p->w->client_ca && check_certs(p, p->w->client_ca, p->ca_line,
					    "client_ca_file", p->ca_file)))
		return 1;
	if (gnutls_x509_privkey_init(&key) < 0)
		return bad_at(p, p->key_line, "out of memory");
	ret = gnutls_x509_privkey_import2(key, &kd, GNUTLS_X509_FMT_PEM, NULL,
					  0);
	gnutls_x509_privkey_deinit(key);
	if (ret < 0)
		return bad_at(p, p->key_line, "key_file %s is not %s (%s): %s",
			      p->key_file,
			      strstr(p->w->key, "ENCRYPTED") ?
				      "an unencrypted private key" :
				      "a PEM private key",
			      gnutls_strerror(ret),
			      strstr(p->w->key, "ENCRYPTED") ?
				      "decrypt it (openssl pkey -in KEY -out KEY.plain)" :
				      "it should hold a '-----BEGIN ... PRIVATE KEY-----' block");
	if (gnutls_certificate_allocate_credentials(&cred) < 0)
		return bad_at(p, p->key_line, "out of memory");
	ret = gnutls_certificate_set_x509_key_mem(cred, &cd, &kd,
						  GNUTLS_X509_FMT_PEM);
	gnutls_certificate_free_credentials(cred);
	if (ret < 0)
		return bad_at(p, p->key_line,
			      "key_file %s and cert_file %s are not a pair (%s): name the key the certificate was made for",
			      p->key_file, p->cert_file, gnutls_strerror(ret));
	return 0;
}

/* what the sections say, once the file is read */
static int finish(struct parse *p)
{
	if (p->users_line && !p->w->n_users)
		return bad_at(p, p->users_line,
			      "basic_auth_users has no user: add 'NAME: BCRYPT-HASH' indented below it, or remove the section");
	if (!p->tls_line)
		return 0;
	if (!p->cert_file || !p->key_file)
		return bad_at(p, p->tls_line,
			      "tls_server_config needs both cert_file and key_file (or remove the section to serve plain HTTP)");
	if (p->w->client_auth != CLIENT_ANY && !p->ca_file)
		return bad_at(p, p->client_line,
			      "client_auth_type needs client_ca_file: the CA certificates that sign the clients' certificates");
	if (p->ca_file && p->w->client_auth == CLIENT_ANY)
		return bad_at(p, p->ca_line,
			      "client_ca_file without a client_auth_type that verifies: add client_auth_type: RequireAndVerifyClientCert");
	if (read_pem(p, p->cert_file, p->cert_line, "cert_file", &p->w->cert) ||
	    read_pem(p, p->key_file, p->key_line, "key_file", &p->w->key) ||
	    (p->ca_file && read_pem(p, p->ca_file, p->ca_line, "client_ca_file",
				    &p->w->client_ca)))
		return 1;
	return check_tls(p);
}

int web_config_load(const char *file, struct web_config *w)
{
	struct parse p = { .file = file, .w = w };
	char line[LINE_MAX_LEN + 2];
	FILE *f;
	int ret = 0;

	*w = (struct web_config){ 0 };
	f = fopen(file, "re");
	if (!f)
		return cli_error("--web-config %s: %s", file, strerror(errno));
	while (!ret && fgets(line, sizeof(line), f)) {
		p.line++;
		if (strlen(line) > LINE_MAX_LEN)
			ret = bad_at(&p, p.line,
				     "a line longer than %d characters",
				     LINE_MAX_LEN);
		else
			ret = parse_line(&p, line);
	}
	if (!ret && ferror(f))
		ret = cli_error("--web-config %s: %s", file, strerror(errno));
	fclose(f);
	if (!ret)
		ret = finish(&p);
	free(p.cert_file);
	free(p.key_file);
	free(p.ca_file);
	if (ret)
		web_config_free(w);
	return ret;
}

void web_config_free(struct web_config *w)
{
	if (w->key)
		explicit_bzero(w->key, strlen(w->key));
	free(w->cert);
	free(w->key);
	free(w->client_ca);
	for (int i = 0; i < w->n_users; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
	}
	free(w->users);
	*w = (struct web_config){ 0 };
}

unsigned int web_mhd_options(const struct web_config *w,
			     struct MHD_OptionItem *opts)
{
	unsigned int flags = 0;
	int i = 0;

	if (w->cert) {
		opts[i++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT,
						     0, w->cert };
		opts[i++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY,
						     0, w->key };
		opts[i++] =
			(struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
						 (void *)TLS_PRIORITIES };
		/* libmicrohttpd asks clients for a certificate with a trust */
		if (w->client_ca)
			opts[i++] = (struct MHD_OptionItem){
				MHD_OPTION_HTTPS_MEM_TRUST, 0, w->client_ca
			};
		flags |= MHD_USE_TLS;
	}
	if (w->n_users)
		flags |= MHD_ALLOW_SUSPEND_RESUME;
	opts[i] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return flags;
}
