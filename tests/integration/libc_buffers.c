/* Static result buffers per rank (issue 25): a pointer a function returned
 * keeps its contents while the other ranks call the same function on their
 * cores, and across MPI calls that let the other ranks of its core run. The
 * expected contents come from the reentrant forms (localtime_r, asctime_r,
 * ttyname_r, getpwuid_r, ...), from glibc's own function called and copied at
 * once where glibc's buffer is per thread (strerror, strsignal), or from the
 * inverse function (l64a, a64l).
 *   localtime, gmtime, ctime from all ranks at once, in a tight loop; the
 *   time zone variables after tzset (TZ is set by the test); asctime of a
 *   year too long for asctime_r; getdate's error in getdate_err; strerror, strsignal, inet_ntoa, l64a, ecvt,
 *   fcvt, tmpnam(NULL), ptsname and ttyname (on a pseudo-terminal),
 *   getpwuid, getgrgid, getprotobyname, gethostbyname.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* ptsname_r, posix_openpt */
#endif
#include <arpa/inet.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netdb.h>
#include <pwd.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include "common.h"

static void barrier(void) {
    MPI_OK(MPI_Barrier(MPI_COMM_WORLD));
}

static void* libc_function(const char* name) {
    void* libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    CHECK(libc, "libc.so.6 is not loaded");
    void* fn = dlsym(libc, name);
    CHECK(fn, "no %s in libc", name);
    return fn;
}

static void same_tm(const struct tm* got, const struct tm* want, const char* what) {
    CHECK(got->tm_sec == want->tm_sec && got->tm_min == want->tm_min &&
              got->tm_hour == want->tm_hour && got->tm_mday == want->tm_mday &&
              got->tm_mon == want->tm_mon && got->tm_year == want->tm_year &&
              got->tm_wday == want->tm_wday && got->tm_yday == want->tm_yday &&
              got->tm_isdst == want->tm_isdst && got->tm_gmtoff == want->tm_gmtoff &&
              strcmp(got->tm_zone, want->tm_zone) == 0,
          "%s: %d-%d-%d %d:%d:%d %s, expected %d-%d-%d %d:%d:%d %s", what, got->tm_year,
          got->tm_mon, got->tm_mday, got->tm_hour, got->tm_min, got->tm_sec, got->tm_zone,
          want->tm_year, want->tm_mon, want->tm_mday, want->tm_hour, want->tm_min, want->tm_sec,
          want->tm_zone);
}

static void check_time(int rank) {
    tzset();
    CHECK(timezone == 3 * 3600 && daylight == 1 && strcmp(tzname[0], "XST") == 0 &&
              strcmp(tzname[1], "XDT") == 0,
          "after tzset: timezone %ld daylight %d tzname %s/%s (TZ=%s)", timezone, daylight,
          tzname[0], tzname[1], getenv("TZ") ? getenv("TZ") : "unset");
    /* Different times per rank (summer and winter), all ranks at once. */
    const time_t t = (time_t)1700000000 + (time_t)rank * 86400 * 47 + rank * 3607;
    struct tm want_local, want_gm;
    localtime_r(&t, &want_local);
    gmtime_r(&t, &want_gm);
    char want_ctime[64];
    asctime_r(&want_local, want_ctime);
    const double end = MPI_Wtime() + 0.02;
    long rounds = 0;
    while (MPI_Wtime() < end || rounds < 1000) {
        struct tm* l = localtime(&t);
        CHECK(l != NULL, "localtime failed");
        same_tm(l, &want_local, "localtime");
        struct tm* g = gmtime(&t);
        CHECK(g == l, "gmtime and localtime return one buffer, as in a process");
        same_tm(g, &want_gm, "gmtime");
        const char* c = ctime(&t);
        CHECK(c && strcmp(c, want_ctime) == 0, "ctime: %s, expected %s", c ? c : "NULL",
              want_ctime);
        ++rounds;
    }
    struct tm* kept = localtime(&t);
    barrier();  /* the other ranks of this core run meanwhile */
    same_tm(kept, &want_local, "localtime's result after a barrier");
    /* asctime: glibc's buffer takes years asctime_r's 26 bytes do not. */
    struct tm big = want_local;
    big.tm_year = 123456789 + rank;
    const char* a = asctime(&big);
    char want_big[128];
    snprintf(want_big, sizeof(want_big), "%.3s %.3s%3d %.2d:%.2d:%.2d %d\n",
             &"SunMonTueWedThuFriSat"[3 * big.tm_wday],
             &"JanFebMarAprMayJunJulAugSepOctNovDec"[3 * big.tm_mon], big.tm_mday, big.tm_hour,
             big.tm_min, big.tm_sec, 1900 + big.tm_year);
    barrier();
    CHECK(a && strcmp(a, want_big) == 0, "asctime of year %d: %s", 1900 + big.tm_year,
          a ? a : "NULL");
    /* getdate without DATEMSK: error 1 in the rank's getdate_err. */
    getdate_err = 0;
    CHECK(getdate("2024-01-01") == NULL && getdate_err == 1, "getdate without DATEMSK: error %d",
          getdate_err);
}

static void check_messages(int rank) {
    char* (*libc_strerror)(int) = (char* (*)(int))libc_function("strerror");
    char* (*libc_strsignal)(int) = (char* (*)(int))libc_function("strsignal");
    char want_known[256], want_unknown[256], want_signal[256];
    const int known = EACCES + rank % 5, unknown = 9000 + rank, sig = SIGRTMIN + rank % 8;
    /* glibc's own, copied before anything else runs on this core. */
    snprintf(want_known, sizeof(want_known), "%s", libc_strerror(known));
    snprintf(want_unknown, sizeof(want_unknown), "%s", libc_strerror(unknown));
    snprintf(want_signal, sizeof(want_signal), "%s", libc_strsignal(sig));
    const char* k = strerror(known);
    const char* u = strerror(unknown);
    const char* s = strsignal(sig);
    struct in_addr addr;
    addr.s_addr = htonl(0x0a000000u | (unsigned)rank << 8 | (unsigned)(rank * 7 % 256));
    char want_addr[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &addr, want_addr, sizeof(want_addr));
    const char* n = inet_ntoa(addr);
    const long value = 123457L * rank + 1;
    const char* l = l64a(value);
    for (int i = 0; i < 3; ++i) {
        barrier();
        CHECK(strcmp(k, want_known) == 0, "strerror(%d): %s, expected %s", known, k, want_known);
        CHECK(strcmp(u, want_unknown) == 0, "strerror(%d): %s, expected %s", unknown, u,
              want_unknown);
        CHECK(strcmp(s, want_signal) == 0, "strsignal(%d): %s, expected %s", sig, s, want_signal);
        CHECK(strcmp(n, want_addr) == 0, "inet_ntoa: %s, expected %s", n, want_addr);
        CHECK(a64l(l) == value, "l64a(%ld) gave %s, which is %ld", value, l, a64l(l));
    }
}

static void check_numbers(int rank) {
    const double x = 3.14159 * rank + 0.5, y = 1e20 / (rank + 1);
    int d1, s1, d2, s2, wd, ws;
    char want_e[20], want_f[328];
    const char* e = ecvt(x, 8, &d1, &s1);
    ecvt_r(x, 8, &wd, &ws, want_e, sizeof(want_e));
    CHECK(d1 == wd && s1 == ws, "ecvt's decimal point and sign");
    const char* f = fcvt(y, 3, &d2, &s2);
    fcvt_r(y, 3, &wd, &ws, want_f, sizeof(want_f));
    CHECK(d2 == wd && s2 == ws, "fcvt's decimal point and sign");
    char* name = tmpnam(NULL);
    char want_name[L_tmpnam];
    CHECK(name != NULL, "tmpnam(NULL) failed");
    snprintf(want_name, sizeof(want_name), "%s", name);
    for (int i = 0; i < 3; ++i) {
        barrier();
        CHECK(strcmp(e, want_e) == 0, "ecvt(%g): %s, expected %s", x, e, want_e);
        CHECK(strcmp(f, want_f) == 0, "fcvt(%g): %s, expected %s", y, f, want_f);
        CHECK(strcmp(name, want_name) == 0, "tmpnam(NULL): %s, was %s", name, want_name);
    }
}

static void check_terminal(int rank) {
    const int master = posix_openpt(O_RDWR | O_NOCTTY);
    int ok = master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0;
    int all_ok = 0;
    MPI_OK(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
    if (!all_ok) {  /* no pseudo-terminals here */
        if (rank == 0) printf("libc_buffers: no pseudo-terminal: ptsname and ttyname not checked\n");
        if (master >= 0) close(master);
        return;
    }
    char want[256];
    CHECK(ptsname_r(master, want, sizeof(want)) == 0, "ptsname_r");
    const char* p = ptsname(master);
    const int slave = open(want, O_RDWR | O_NOCTTY);
    CHECK(slave >= 0, "cannot open %s", want);
    const char* t = ttyname(slave);
    char want_tty[256];
    CHECK(ttyname_r(slave, want_tty, sizeof(want_tty)) == 0, "ttyname_r");
    for (int i = 0; i < 3; ++i) {
        barrier();
        CHECK(p && strcmp(p, want) == 0, "ptsname: %s, expected %s", p ? p : "NULL", want);
        CHECK(t && strcmp(t, want_tty) == 0, "ttyname: %s, expected %s", t ? t : "NULL", want_tty);
    }
    close(slave);
    close(master);
}

static void check_name_service(int rank) {
    (void)rank;
    char buf[4096];
    struct passwd pw_want, *pw_r = NULL;
    struct group gr_want, *gr_r = NULL;
    const int have_pw = getpwuid_r(getuid(), &pw_want, buf, 2048, &pw_r) == 0 && pw_r;
    const int have_gr = getgrgid_r(getgid(), &gr_want, buf + 2048, 2048, &gr_r) == 0 && gr_r;
    struct passwd* pw = getpwuid(getuid());
    struct group* gr = getgrgid(getgid());
    struct protoent* proto = getprotobyname("tcp");
    struct hostent* host = gethostbyname("127.0.0.1");
    for (int i = 0; i < 3; ++i) {
        barrier();
        if (have_pw)
            CHECK(pw && pw->pw_uid == pw_want.pw_uid && strcmp(pw->pw_name, pw_want.pw_name) == 0 &&
                      strcmp(pw->pw_dir, pw_want.pw_dir) == 0,
                  "getpwuid: %s, expected %s", pw ? pw->pw_name : "NULL", pw_want.pw_name);
        if (have_gr)
            CHECK(gr && gr->gr_gid == gr_want.gr_gid && strcmp(gr->gr_name, gr_want.gr_name) == 0,
                  "getgrgid: %s, expected %s", gr ? gr->gr_name : "NULL", gr_want.gr_name);
        if (proto) CHECK(proto->p_proto == 6 && strcmp(proto->p_name, "tcp") == 0, "getprotobyname");
        CHECK(host && strcmp(host->h_name, "127.0.0.1") == 0 && host->h_addrtype == AF_INET,
              "gethostbyname(\"127.0.0.1\"): %s", host ? host->h_name : "NULL");
    }
}

int main(int argc, char** argv) {
    MPI_OK(MPI_Init(&argc, &argv));
    int rank;
    MPI_OK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    check_time(rank);
    check_messages(rank);
    check_numbers(rank);
    check_terminal(rank);
    check_name_service(rank);
    MPI_OK(MPI_Finalize());
    return 0;
}
