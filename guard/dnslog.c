/* Per-client bound on the DNS listener's decision lines: see
 * guard/dnslog.h. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdlib.h>
#include <string.h>

#include "guard/dnslog.h"
#include "guard/log.h"
#include "guard/logevery.h"
#include "guard/metrics.h"

struct dnslog_client {
	struct dnslog		*dl;
	int			 used;
	int			 family;
	unsigned char		 addr[16];
	char			 name[INET6_ADDRSTRLEN];
	long long		 tokens_ms;	/* tokens, in thousandths */
	long long		 refill;	/* monotonic ms of the last refill */
	long long		 seen;		/* monotonic ms of the last query */
	struct log_every	 agg;		/* the dns_log_suppressed lines */
};

struct dnslog {
	struct log		*lg;
	struct metrics		*m;
	/* The last one is every client the table has no room for. */
	struct dnslog_client	 c[DNSLOG_CLIENTS + 1];
};

static void
agg_line(struct log *lg, unsigned long count, void *arg)
{
	struct dnslog_client *k = arg;
	struct log_rec rec;

	log_rec_begin(&rec, lg, "dns_log_suppressed");
	log_rec_str(&rec, "client", k->name);
	log_rec_int(&rec, "lines", (long long)count);
	log_emit(lg, &rec);
}

struct dnslog *
dnslog_new(struct log *lg, struct metrics *m)
{
	struct dnslog *dl = calloc(1, sizeof(*dl));

	if (dl == NULL)
		return NULL;
	dl->lg = lg;
	dl->m = m;
	dl->c[DNSLOG_CLIENTS].dl = dl;
	dl->c[DNSLOG_CLIENTS].used = 1;
	dl->c[DNSLOG_CLIENTS].tokens_ms = DNSLOG_BURST * 1000LL;
	strcpy(dl->c[DNSLOG_CLIENTS].name, "other");
	return dl;
}

void
dnslog_free(struct dnslog *dl)
{
	size_t i;

	if (dl == NULL)
		return;
	for (i = 0; i <= DNSLOG_CLIENTS; i++)
		log_every_free(&dl->c[i].agg);
	free(dl);
}

/* The bucket of sa's address: its own, a free or long quiet one taken
 * for it, or the shared last one. */
static struct dnslog_client *
find(struct dnslog *dl, const struct sockaddr *sa, long long now)
{
	unsigned char a[16] = { 0 };
	int fam = sa->sa_family;
	struct dnslog_client *k, *spare = NULL;
	size_t i;

	if (fam == AF_INET)
		memcpy(a, &((const struct sockaddr_in *)(const void *)sa)->sin_addr, 4);
	else if (fam == AF_INET6)
		memcpy(a, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr, 16);
	else
		return &dl->c[DNSLOG_CLIENTS];
	for (i = 0; i < DNSLOG_CLIENTS; i++) {
		k = &dl->c[i];
		if (k->used && k->family == fam && memcmp(k->addr, a, 16) == 0)
			return k;
		if (spare == NULL && (!k->used || now - k->seen >= DNSLOG_IDLE_MS))
			spare = k;
	}
	if (spare == NULL)
		return &dl->c[DNSLOG_CLIENTS];
	log_every_free(&spare->agg);	/* the old client's count, first */
	memset(spare, 0, sizeof(*spare));
	spare->dl = dl;
	spare->used = 1;
	spare->family = fam;
	memcpy(spare->addr, a, 16);
	(void)inet_ntop(fam, a, spare->name, sizeof(spare->name));
	spare->tokens_ms = DNSLOG_BURST * 1000LL;
	spare->refill = now;
	return spare;
}

int
dnslog_admit(struct dnslog *dl, const struct sockaddr *sa)
{
	long long now = log_every_now_ms();
	struct dnslog_client *k;

	if (dl == NULL)
		return 1;
	k = find(dl, sa, now);
	k->seen = now;
	if (now > k->refill) {
		k->tokens_ms += (now - k->refill) * DNSLOG_RATE;
		if (k->tokens_ms > DNSLOG_BURST * 1000LL)
			k->tokens_ms = DNSLOG_BURST * 1000LL;
		k->refill = now;
	}
	if (k->tokens_ms >= 1000) {
		k->tokens_ms -= 1000;
		return 1;
	}
	metrics_dns_log_suppressed(dl->m);
	log_every_fn(dl->lg, &k->agg, DNSLOG_EVERY_S, agg_line, k);
	return 0;
}
