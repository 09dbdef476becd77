/*
 * A fake libnvidia-ml.so.1 for testing trainwatch without a GPU.
 *
 * Compiled against NVIDIA's own nvml.h so every struct it fills has the header's layout; the agent loads it
 * through the same JNA path as the real library. It plays a scenario file (FAKE_NVML_SCENARIO, format in
 * docs/NVML.md) that gives per-GPU values over scenario time, error codes per function, lost GPUs and XID
 * events. Build variants (-D flags, see build-fake.sh) leave out symbols the way older drivers do and change
 * the process-struct stride of nvmlDeviceGetComputeRunningProcesses_v3:
 *
 *   (none)              a current driver: every versioned symbol, _v3 writes 24-byte entries
 *   FAKE_STRIDE32       an R535-era driver: _v3 writes 32-byte entries, nvmlDeviceGetConfComputeMemSizeInfo
 *                       exists, nvmlDeviceGetRunningProcessDetailList and ...ClocksEventReasons do not
 *   FAKE_NO_V3_PROCS    no ..._v3 process call (older driver): _v2 with 24-byte entries, no GPM (nvmlGpm*)
 *   FAKE_LEGACY         an old driver: only unversioned/_v2-less symbols, 16-byte process entries, no GPM and
 *                       no nvmlDeviceGetFieldValues
 *
 * Scenario time: FAKE_NVML_CLOCK = fixed:<seconds> (default fixed:0) or wall[:<speed>] (seconds since the first
 * nvmlInit, times speed). In-process tests set it with fake_nvml_set_time().
 */
#define NVML_NO_UNVERSIONED_FUNC_DEFS 1
#include <nvml.h>

#include <ctype.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

/* The facts of docs/NVML.md that the Java reader relies on, checked against the header at build time. */
_Static_assert(sizeof(nvmlMemory_t) == 24, "nvmlMemory_t");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40 && __builtin_offsetof(nvmlMemory_v2_t, reserved) == 16
               && __builtin_offsetof(nvmlMemory_v2_t, free) == 24 && __builtin_offsetof(nvmlMemory_v2_t, used) == 32,
               "nvmlMemory_v2_t");
_Static_assert(nvmlMemory_v2 == 0x02000028, "nvmlMemory_v2 version");
_Static_assert(sizeof(nvmlProcessInfo_v1_t) == 16, "nvmlProcessInfo_v1_t");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24 && sizeof(nvmlProcessInfo_v2_t) == 24, "nvmlProcessInfo_t");
_Static_assert(sizeof(nvmlProcessUtilizationSample_t) == 32
               && __builtin_offsetof(nvmlProcessUtilizationSample_t, smUtil) == 16, "nvmlProcessUtilizationSample_t");
_Static_assert(sizeof(nvmlSample_t) == 16 && __builtin_offsetof(nvmlSample_t, sampleValue) == 8, "nvmlSample_t");
_Static_assert(sizeof(nvmlEventData_t) == 32 && __builtin_offsetof(nvmlEventData_t, eventData) == 16, "nvmlEventData_t");
_Static_assert(sizeof(nvmlPciInfo_t) == 68 && __builtin_offsetof(nvmlPciInfo_t, busId) == 36, "nvmlPciInfo_t");
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t");

/* GPU performance monitoring (GPM) arrived with NVML 12 (driver R520 on). When the build's nvml.h predates it
 * (Debian bookworm ships 11.8), the declarations are taken as NVML 12's header has them: a sample is an opaque
 * handle, nvmlGpmMetricsGet_t holds the version, the count, two samples and NVML_GPM_METRIC_MAX (98) metrics of
 * 40 bytes. NVIDIA's Python binding declares the same layout (c_nvmlGpmMetricsGet_t), which the cross-check
 * test reads through; the assertions below pin the offsets the Java reader uses either way. */
#ifndef NVML_GPM_METRICS_GET_VERSION
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;
typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct { char *shortName; char *longName; char *unit; } metricInfo;
} nvmlGpmMetric_t;
#define NVML_GPM_METRIC_MAX 98
typedef struct {
    unsigned int version;
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;
#define NVML_GPM_METRICS_GET_VERSION 1
typedef struct { unsigned int version; unsigned int isSupportedDevice; } nvmlGpmSupport_t;
#define NVML_GPM_SUPPORT_VERSION 1
#define NVML_GPM_METRIC_SM_UTIL 2
#define NVML_GPM_METRIC_SM_OCCUPANCY 3
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5
#define NVML_GPM_METRIC_HMMA_TENSOR_UTIL 7
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10
#define NVML_GPM_METRIC_PCIE_TX_PER_SEC 20
#define NVML_GPM_METRIC_PCIE_RX_PER_SEC 21
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61
#endif
_Static_assert(NVML_GPM_METRICS_GET_VERSION == 1 && NVML_GPM_SUPPORT_VERSION == 1, "GPM struct versions");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40 && __builtin_offsetof(nvmlGpmMetric_t, nvmlReturn) == 4
               && __builtin_offsetof(nvmlGpmMetric_t, value) == 8, "nvmlGpmMetric_t");
_Static_assert(__builtin_offsetof(nvmlGpmMetricsGet_t, numMetrics) == 4
               && __builtin_offsetof(nvmlGpmMetricsGet_t, sample1) == 8
               && __builtin_offsetof(nvmlGpmMetricsGet_t, sample2) == 16
               && __builtin_offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t");
_Static_assert(sizeof(nvmlFieldValue_t) == 40 && __builtin_offsetof(nvmlFieldValue_t, scopeId) == 4
               && __builtin_offsetof(nvmlFieldValue_t, valueType) == 24
               && __builtin_offsetof(nvmlFieldValue_t, nvmlReturn) == 28
               && __builtin_offsetof(nvmlFieldValue_t, value) == 32, "nvmlFieldValue_t");
_Static_assert(NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX == 138 && NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX == 139,
               "NVLink throughput field ids");
_Static_assert(NVML_PCIE_UTIL_TX_BYTES == 0 && NVML_PCIE_UTIL_RX_BYTES == 1, "PCIe counters");

/* The R535 _v3 entry: nvmlProcessInfo_t plus usedGpuCcProtectedMemory, written without a new symbol. */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
    unsigned long long usedGpuCcProtectedMemory;
} fake_process_info_r535_t;
_Static_assert(sizeof(fake_process_info_r535_t) == 32, "r535 stride");

/* ---------------------------------------------------------------- scenario model */

#define MAX_GPUS 16
#define MAX_KEYS 256
#define MAX_PROCS 64
#define MAX_PROC_KEYS 64
#define MAX_ERRORS 256
#define MAX_EVENTS 256
#define MAX_SETS 8
#define NA_U64 0xFFFFFFFFFFFFFFFFULL

enum field {
    F_MEM_TOTAL, F_MEM_RESERVED, F_MEM_USED, F_UTIL_GPU, F_UTIL_MEM, F_SM_CLOCK, F_MEM_CLOCK, F_GRAPHICS_CLOCK,
    F_MAX_SM_CLOCK, F_MAX_MEM_CLOCK, F_REASONS, F_POWER, F_POWER_LIMIT, F_ENERGY, F_TEMP, F_PSTATE, F_IDLE_SHARE,
    F_PCIE_TX, F_PCIE_RX, F_NVLINK_TX, F_NVLINK_RX,
    F_GPM_SM, F_GPM_OCCUPANCY, F_GPM_ANY_TENSOR, F_GPM_HMMA, F_GPM_DRAM, F_GPM_PCIE_TX, F_GPM_PCIE_RX,
    F_GPM_NVLINK_TX, F_GPM_NVLINK_RX, F_COUNT
};
#define F_GPM_FIRST F_GPM_SM
static const char *FIELD_NAMES[F_COUNT] = {
    "memory_total", "memory_reserved", "memory_used", "util_gpu", "util_mem", "sm_clock_mhz", "mem_clock_mhz",
    "graphics_clock_mhz", "max_sm_clock_mhz", "max_mem_clock_mhz", "clock_reasons", "power_mw",
    "power_limit_mw", "energy_mj", "temperature_c", "pstate", "idle_share",
    "pcie_tx_kbps", "pcie_rx_kbps", "nvlink_tx_kib", "nvlink_rx_kib",
    "gpm_sm_util", "gpm_sm_occupancy", "gpm_any_tensor_util", "gpm_hmma_tensor_util", "gpm_dram_bw_util",
    "gpm_pcie_tx_mibps", "gpm_pcie_rx_mibps", "gpm_nvlink_tx_mibps", "gpm_nvlink_rx_mibps"};
/* GPM metric id -> scenario field (percent or MiB/s, averaged over the interval between two samples). */
static const struct { unsigned int id; int field; } GPM_FIELDS[] __attribute__((unused)) = {
    {NVML_GPM_METRIC_SM_UTIL, F_GPM_SM}, {NVML_GPM_METRIC_SM_OCCUPANCY, F_GPM_OCCUPANCY},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, F_GPM_ANY_TENSOR}, {NVML_GPM_METRIC_HMMA_TENSOR_UTIL, F_GPM_HMMA},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, F_GPM_DRAM}, {NVML_GPM_METRIC_PCIE_TX_PER_SEC, F_GPM_PCIE_TX},
    {NVML_GPM_METRIC_PCIE_RX_PER_SEC, F_GPM_PCIE_RX}, {NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC, F_GPM_NVLINK_TX},
    {NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC, F_GPM_NVLINK_RX}};

typedef struct { int64_t t; double v; int ramp; } key_t_;
typedef struct { int n; key_t_ k[MAX_KEYS]; } series_t;

/* env: a selector "VAR=VALUE[,VAR=VALUE…]" resolved to a live PID at each call (pid 0 until then). */
typedef struct { unsigned int pid; unsigned long long mem; int sm; int memutil; char env[160]; } proc_t;
typedef struct { int64_t t; int n; proc_t p[MAX_PROCS]; } proc_key_t;

typedef struct {
    char uuid[96], name[96], bus_id[32];
    unsigned int domain, bus, device;
    int nvlink_links;        /* links the NVLink counters spread over (per-link scopes), default 18 */
    series_t f[F_COUNT];
    int nproc_keys;
    proc_key_t proc_keys[MAX_PROC_KEYS];
} gpu_t;

/* Function identities for error injection. */
#define FN_LIST(X) \
    X(nvmlInit_v2) X(nvmlInit) X(nvmlInitWithFlags) X(nvmlSystemGetDriverVersion) X(nvmlDeviceGetCount_v2) \
    X(nvmlDeviceGetCount) X(nvmlDeviceGetHandleByIndex_v2) X(nvmlDeviceGetHandleByIndex) X(nvmlDeviceGetIndex) \
    X(nvmlDeviceGetName) X(nvmlDeviceGetUUID) X(nvmlDeviceGetPciInfo_v3) X(nvmlDeviceGetPciInfo_v2) \
    X(nvmlDeviceGetPciInfo) X(nvmlDeviceGetMemoryInfo) X(nvmlDeviceGetMemoryInfo_v2) \
    X(nvmlDeviceGetUtilizationRates) X(nvmlDeviceGetSamples) X(nvmlDeviceGetClockInfo) \
    X(nvmlDeviceGetMaxClockInfo) X(nvmlDeviceGetCurrentClocksEventReasons) \
    X(nvmlDeviceGetCurrentClocksThrottleReasons) X(nvmlDeviceGetPowerUsage) X(nvmlDeviceGetEnforcedPowerLimit) \
    X(nvmlDeviceGetTotalEnergyConsumption) X(nvmlDeviceGetTemperature) X(nvmlDeviceGetPerformanceState) \
    X(nvmlDeviceGetComputeRunningProcesses_v3) X(nvmlDeviceGetComputeRunningProcesses_v2) \
    X(nvmlDeviceGetComputeRunningProcesses) X(nvmlDeviceGetProcessUtilization) X(nvmlDeviceRegisterEvents) \
    X(nvmlDeviceGetSupportedEventTypes) X(nvmlEventSetCreate) X(nvmlEventSetWait_v2) X(nvmlEventSetWait) \
    X(nvmlDeviceGetConfComputeMemSizeInfo) X(nvmlDeviceGetRunningProcessDetailList) \
    X(nvmlDeviceGetPcieThroughput) X(nvmlDeviceGetFieldValues) X(nvmlGpmQueryDeviceSupport) \
    X(nvmlGpmSampleAlloc) X(nvmlGpmSampleGet) X(nvmlGpmMetricsGet)
#define FN_ENUM(n) FN_##n,
#define FN_NAME(n) #n,
enum fn_id { FN_LIST(FN_ENUM) FN_COUNT, FN_ANY_DEVICE };
static const char *FN_NAMES[FN_COUNT] = {FN_LIST(FN_NAME)};

typedef struct { int gpu; int fn; int64_t t; int code; } err_t;  /* gpu -1: every GPU / global */
typedef struct { int64_t t; int gpu; unsigned long long type; unsigned long long data; } event_t;

struct nvmlDevice_st { int index; };
struct nvmlEventSet_st { int used; unsigned long long mask[MAX_GPUS]; unsigned char delivered[MAX_EVENTS]; };

typedef struct {
    int loaded;
    char driver[80];
    int64_t epoch_us;        /* unix µs of scenario time 0 */
    int64_t sample_period_us;
    int ngpus;
    gpu_t gpu[MAX_GPUS];
    int nerr;
    err_t err[MAX_ERRORS];
    int nevents;
    event_t events[MAX_EVENTS];
    int nvlink_aggregate;    /* 1: the NVLink fields answer scopeId UINT_MAX with all links summed (default) */
    int pcie_window_us;      /* nvmlDeviceGetPcieThroughput blocks this long, as real drivers do for ~20 ms */
} scenario_t;

/* Two buffers: a scenario is parsed into the one not in use and then swapped in, so a reload (FAKE_NVML_WATCH)
 * never changes what a call in flight on another thread reads. */
/* Page-aligned, and emptied with madvise rather than memset: the tables are ~15 MB each, and a memset would make all
 * of them resident in every process that loads the fake, where a real libnvidia-ml.so.1 holds nothing like it. Only
 * the entries a scenario fills are touched, so the process measurements (bench/agent-vs-exporter) see the caller. */
static scenario_t BUF0 __attribute__((aligned(4096)));
static scenario_t BUF1 __attribute__((aligned(4096)));
static scenario_t *SP = &BUF0;

static void empty_buffer(scenario_t *b) {
    size_t whole = sizeof *b & ~(size_t) 4095;
    /* On private anonymous pages (.bss) MADV_DONTNEED gives zero-filled pages on the next touch. */
    if (whole == 0 || madvise(b, whole, MADV_DONTNEED) != 0) whole = 0;
    memset((char *) b + whole, 0, sizeof *b - whole);
}
#define S (*SP)

static struct nvmlDevice_st HANDLES[MAX_GPUS];
static struct nvmlEventSet_st SETS[MAX_SETS];
static pthread_mutex_t LOCK = PTHREAD_MUTEX_INITIALIZER;
static int REFCOUNT;
static long INIT_CALLS, SHUTDOWN_CALLS;

/* ---------------------------------------------------------------- time */

static int64_t FIXED_US;           /* scenario µs in fixed mode (atomic) */
static int WALL_MODE;
static double WALL_SPEED = 1.0;
static struct timespec WALL_START;
static int64_t WALL_START_UNIX_US;
static int CLOCK_CONFIGURED;

static void configure_clock(void) {
    if (CLOCK_CONFIGURED) return;
    CLOCK_CONFIGURED = 1;
    const char *c = getenv("FAKE_NVML_CLOCK");
    if (c && strncmp(c, "wall", 4) == 0) {
        WALL_MODE = 1;
        if (c[4] == ':') WALL_SPEED = atof(c + 5);
        clock_gettime(CLOCK_MONOTONIC, &WALL_START);
        struct timespec real;
        clock_gettime(CLOCK_REALTIME, &real);
        WALL_START_UNIX_US = (int64_t) real.tv_sec * 1000000LL + real.tv_nsec / 1000;
    } else if (c && strncmp(c, "fixed:", 6) == 0) {
        __atomic_store_n(&FIXED_US, (int64_t) (atof(c + 6) * 1e6), __ATOMIC_RELAXED);
    }
}

static int64_t now_us(void) {
    if (WALL_MODE) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        double s = (ts.tv_sec - WALL_START.tv_sec) + (ts.tv_nsec - WALL_START.tv_nsec) / 1e9;
        return (int64_t) (s * WALL_SPEED * 1e6);
    }
    return __atomic_load_n(&FIXED_US, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- scenario parsing */

static int fail_line(int line, const char *msg, const char *detail) {
    fprintf(stderr, "fake-nvml: scenario line %d: %s%s%s\n", line, msg, detail ? ": " : "", detail ? detail : "");
    return -1;
}

static int parse_u64(const char *s, unsigned long long *out) {
    char *end;
    if (strcmp(s, "na") == 0) { *out = NA_U64; return 0; }
    *out = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? strtoull(s, &end, 16) : (unsigned long long) strtod(s, &end);
    return (end == s || (*end && *end != ':')) ? -1 : 0;
}

static int find_field(const char *k) {
    for (int i = 0; i < F_COUNT; i++) if (strcmp(FIELD_NAMES[i], k) == 0) return i;
    return -1;
}

static int find_fn(const char *k) {
    for (int i = 0; i < FN_COUNT; i++) if (strcmp(FN_NAMES[i], k) == 0) return i;
    return -1;
}

static int parse_processes(int line, gpu_t *g, int64_t t, char *rest) {
    if (g->nproc_keys >= MAX_PROC_KEYS) return fail_line(line, "too many process lists", NULL);
    proc_key_t *pk = &g->proc_keys[g->nproc_keys++];
    pk->t = t;
    pk->n = 0;
    for (char *tok = strtok(rest, " \t"); tok; tok = strtok(NULL, " \t")) {
        if (strcmp(tok, "none") == 0) continue;
        if (pk->n >= MAX_PROCS) return fail_line(line, "too many processes", NULL);
        proc_t *p = &pk->p[pk->n++];
        char *parts[4] = {0};
        int np = 0;
        for (char *c = tok; np < 4; ) {
            parts[np++] = c;
            c = strchr(c, ':');
            if (!c) break;
            *c++ = 0;
        }
        unsigned long long pid = 0, mem;
        int selector = np >= 2 && strchr(parts[0], '=') != NULL;
        if (np < 2 || (!selector && parse_u64(parts[0], &pid)) || parse_u64(parts[1], &mem))
            return fail_line(line, "process must be pid:bytes[:sm%:mem%] or VAR=VALUE[,VAR=VALUE]:bytes[:sm%:mem%]", tok);
        if (selector && strlen(parts[0]) >= sizeof p->env) return fail_line(line, "selector too long", tok);
        p->env[0] = 0;
        if (selector) strcpy(p->env, parts[0]);
        p->pid = (unsigned int) pid;
        p->mem = mem;
        p->sm = np > 2 ? atoi(parts[2]) : -1;
        p->memutil = np > 3 ? atoi(parts[3]) : -1;
    }
    return 0;
}

static int add_key(int line, series_t *s, int64_t t, const char *val) {
    if (s->n >= MAX_KEYS) return fail_line(line, "too many values for one field", NULL);
    int ramp = val[0] == '~';
    const char *num = val + ramp;
    double v;
    if (num[0] == '0' && (num[1] == 'x' || num[1] == 'X')) {
        unsigned long long u;
        if (parse_u64(num, &u)) return fail_line(line, "not a number", val);
        v = (double) u;
    } else {
        char *end;
        v = strtod(num, &end);     /* decimals allowed: GPM percentages, fractional rates */
        if (end == num || *end || v < 0) return fail_line(line, "not a number", val);
    }
    if (s->n > 0 && s->k[s->n - 1].t > t) return fail_line(line, "times must not go backwards per field", NULL);
    s->k[s->n++] = (key_t_) {t, v, ramp};
    return 0;
}

/* Parses into the buffer not in use; swaps it in when it parsed, or when swap_on_failure (an explicit load that
 * fails leaves no scenario, as before). Called under LOCK. */
static int parse_scenario_into(const char *path, scenario_t *out);
static int parse_scenario(const char *path, int swap_on_failure) {
    if (access(path, R_OK) != 0) { fprintf(stderr, "fake-nvml: cannot open scenario %s\n", path); return -1; }
    scenario_t *out = SP == &BUF0 ? &BUF1 : &BUF0;
    int rc = parse_scenario_into(path, out);
    if (rc == 0 || swap_on_failure) __atomic_store_n(&SP, out, __ATOMIC_SEQ_CST);
    return rc;
}

#undef S
#define S (*out)
static int parse_scenario_into(const char *path, scenario_t *out) {
    empty_buffer(out);
    FILE *f = fopen(path, "r");
    if (!f) { fprintf(stderr, "fake-nvml: cannot open scenario %s\n", path); return -1; }
    strcpy(S.driver, "535.261.03");
    /* Sample timestamps: scenario time 0 is 2026-01-01T00:00:00Z, or in wall mode the real time of the first init,
     * so that they line up with the caller's own clock. */
    S.epoch_us = WALL_MODE ? WALL_START_UNIX_US : 1767225600LL * 1000000LL;
    S.sample_period_us = 166667;             /* 1/6 s, as on data-centre GPUs */
    S.nvlink_aggregate = 1;
    for (int i = 0; i < MAX_GPUS; i++) S.gpu[i].nvlink_links = 18;
    char buf[4096];
    int line = 0, rc = 0;
    while (rc == 0 && fgets(buf, sizeof buf, f)) {
        line++;
        char *hash = strchr(buf, '#');
        if (hash) *hash = 0;
        size_t len = strlen(buf);
        while (len && isspace((unsigned char) buf[len - 1])) buf[--len] = 0;
        char *p = buf;
        while (isspace((unsigned char) *p)) p++;
        if (!*p) continue;
        char *ts = strtok(p, " \t"), *gs = strtok(NULL, " \t"), *key = strtok(NULL, " \t");
        char *rest = strtok(NULL, "");
        while (rest && isspace((unsigned char) *rest)) rest++;
        if (!ts || !gs || !key) { rc = fail_line(line, "expected: <time> <gpu|-> <key> [value]", NULL); break; }
        int64_t t = (int64_t) (atof(ts) * 1e6);
        int gi = -1;
        if (strcmp(gs, "-") != 0 && strcmp(gs, "*") != 0) {
            gi = atoi(gs);
            if (gi < 0 || gi >= MAX_GPUS) { rc = fail_line(line, "bad gpu index", gs); break; }
            if (gi >= S.ngpus) S.ngpus = gi + 1;
        }
        int lo = gi < 0 ? 0 : gi, hi = gi < 0 ? S.ngpus : gi + 1;
        int fi;
        if (strcmp(key, "driver") == 0 && rest) {
            snprintf(S.driver, sizeof S.driver, "%s", rest);
        } else if (strcmp(key, "gpus") == 0 && rest) {
            S.ngpus = atoi(rest);
            if (S.ngpus < 0 || S.ngpus > MAX_GPUS) rc = fail_line(line, "bad gpu count", rest);
        } else if (strcmp(key, "epoch") == 0 && rest) {
            S.epoch_us = (int64_t) (atof(rest) * 1e6);
        } else if (strcmp(key, "sample_period_ms") == 0 && rest) {
            S.sample_period_us = (int64_t) (atof(rest) * 1e3);
            if (S.sample_period_us <= 0) rc = fail_line(line, "bad sample period", rest);
        } else if (strcmp(key, "nvlink_aggregate") == 0 && rest) {
            S.nvlink_aggregate = atoi(rest) != 0;
        } else if (strcmp(key, "pcie_window_ms") == 0 && rest) {
            S.pcie_window_us = (int) (atof(rest) * 1e3);
        } else if (strcmp(key, "nvlink_links") == 0 && rest) {
            int links = atoi(rest);
            if (links < 1 || links > 18) { rc = fail_line(line, "nvlink_links must be 1-18", rest); break; }
            for (int g = lo; g < hi; g++) S.gpu[g].nvlink_links = links;
        } else if (strcmp(key, "uuid") == 0 && rest && gi >= 0) {
            snprintf(S.gpu[gi].uuid, sizeof S.gpu[gi].uuid, "%s", rest);
        } else if (strcmp(key, "name") == 0 && rest && gi >= 0) {
            snprintf(S.gpu[gi].name, sizeof S.gpu[gi].name, "%s", rest);
        } else if (strcmp(key, "pci") == 0 && rest && gi >= 0) {
            gpu_t *g = &S.gpu[gi];
            if (sscanf(rest, "%x:%x:%x", &g->domain, &g->bus, &g->device) != 3) rc = fail_line(line, "pci must be DDDDDDDD:BB:DD.F", rest);
            snprintf(g->bus_id, sizeof g->bus_id, "%s", rest);
        } else if (strcmp(key, "processes") == 0 && gi >= 0) {
            char empty[] = "";
            rc = parse_processes(line, &S.gpu[gi], t, rest ? rest : empty);
        } else if ((fi = find_field(key)) >= 0 && rest) {
            for (int g = lo; g < hi && rc == 0; g++) rc = add_key(line, &S.gpu[g].f[fi], t, rest);
        } else if (strcmp(key, "error") == 0 && rest) {
            char *fname = strtok(rest, " \t"), *code = strtok(NULL, " \t");
            int fn = fname ? (strcmp(fname, "*") == 0 ? FN_ANY_DEVICE : find_fn(fname)) : -1;
            if (fn < 0 || !code) { rc = fail_line(line, "error needs a known function and a code", fname); break; }
            if (S.nerr >= MAX_ERRORS) { rc = fail_line(line, "too many errors", NULL); break; }
            S.err[S.nerr++] = (err_t) {gi, fn, t, atoi(code)};
        } else if (strcmp(key, "lost") == 0 && gi >= 0) {
            if (S.nerr >= MAX_ERRORS) { rc = fail_line(line, "too many errors", NULL); break; }
            S.err[S.nerr++] = (err_t) {gi, FN_ANY_DEVICE, t, NVML_ERROR_GPU_IS_LOST};
        } else if ((strcmp(key, "xid") == 0 || strcmp(key, "event") == 0) && rest && gi >= 0) {
            unsigned long long type = nvmlEventTypeXidCriticalError, data;
            char *a = strtok(rest, " \t"), *b = strtok(NULL, " \t");
            if (strcmp(key, "event") == 0) {
                if (!b || parse_u64(a, &type) || parse_u64(b, &data)) { rc = fail_line(line, "event needs <type> <data>", NULL); break; }
            } else if (parse_u64(a, &data)) { rc = fail_line(line, "xid needs a number", a); break; }
            if (S.nevents >= MAX_EVENTS) { rc = fail_line(line, "too many events", NULL); break; }
            S.events[S.nevents++] = (event_t) {t, gi, type, data};
        } else {
            rc = fail_line(line, "unknown key or missing value", key);
        }
    }
    fclose(f);
    for (int i = 0; rc == 0 && i < S.ngpus; i++) {
        gpu_t *g = &S.gpu[i];
        if (!g->uuid[0]) snprintf(g->uuid, sizeof g->uuid, "GPU-00000000-0000-0000-0000-%012d", i);
        if (!g->name[0]) snprintf(g->name, sizeof g->name, "NVIDIA Fake GPU");
        if (!g->bus_id[0]) {
            g->bus = (unsigned int) (i + 1);
            snprintf(g->bus_id, sizeof g->bus_id, "00000000:%02X:00.0", g->bus);
        }
    }
    S.loaded = rc == 0;
    return rc;
}
#undef S
#define S (*SP)

/* ---------------------------------------------------------------- lookups */

/* Value of a field at time t: step between keys, linear into a key marked '~'. Returns 0 when the scenario never
 * gives the field (then the call answers NOT_SUPPORTED). */
static int value_at(const series_t *s, int64_t t, double *out) {
    if (s->n == 0) return 0;
    int i = 0;
    while (i + 1 < s->n && s->k[i + 1].t <= t) i++;
    if (s->k[i].t > t) { *out = s->k[0].v; return 1; }
    if (i + 1 < s->n && s->k[i + 1].ramp) {
        const key_t_ *a = &s->k[i], *b = &s->k[i + 1];
        *out = a->v + (b->v - a->v) * (double) (t - a->t) / (double) (b->t - a->t);
    } else {
        *out = s->k[i].v;
    }
    return 1;
}

static const proc_key_t *procs_at(const gpu_t *g, int64_t t) {
    const proc_key_t *r = NULL;
    for (int i = 0; i < g->nproc_keys && g->proc_keys[i].t <= t; i++) r = &g->proc_keys[i];
    return r;
}

/* The injected code for fn on gpu at time t (latest matching entry wins), or SUCCESS. */
static nvmlReturn_t injected(int gpu, int fn, int64_t t) {
    nvmlReturn_t rc = NVML_SUCCESS;
    int64_t best = INT64_MIN;
    for (int i = 0; i < S.nerr; i++) {
        const err_t *e = &S.err[i];
        if (e->t > t || e->t < best) continue;
        if (e->gpu != -1 && e->gpu != gpu) continue;
        if (e->fn != fn && !(e->fn == FN_ANY_DEVICE && gpu >= 0)) continue;
        best = e->t;
        rc = (nvmlReturn_t) e->code;
    }
    return rc;
}

static nvmlReturn_t global_call(int fn) {
    if (REFCOUNT <= 0) return NVML_ERROR_UNINITIALIZED;
    return injected(-1, fn, now_us());
}

/* FAKE_NVML_WATCH=1: the scenario file is read again when it changes (checked at most every 200 ms), for tests
 * that learn only while a run goes on what its GPUs should show. A file that does not parse keeps the old one. */
static void reload_if_changed(void) {
    static int configured, watch;
    static struct timespec checked, mtime;
    pthread_mutex_lock(&LOCK);
    if (!configured) {
        configured = 1;
        const char *w = getenv("FAKE_NVML_WATCH");
        watch = w && strcmp(w, "1") == 0;
    }
    const char *path = getenv("FAKE_NVML_SCENARIO");
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (watch && path && (now.tv_sec - checked.tv_sec) * 1000000000LL + (now.tv_nsec - checked.tv_nsec) >= 200000000LL) {
        checked = now;
        struct stat st;
        if (stat(path, &st) == 0 && (st.st_mtim.tv_sec != mtime.tv_sec || st.st_mtim.tv_nsec != mtime.tv_nsec)) {
            int first = mtime.tv_sec == 0 && mtime.tv_nsec == 0;
            mtime = st.st_mtim;
            if (!first && parse_scenario(path, 0) != 0) fprintf(stderr, "fake-nvml: kept the previous scenario\n");
        }
    }
    pthread_mutex_unlock(&LOCK);
}

/* Common prologue of a device call: initialised, valid handle, injected error. */
static nvmlReturn_t device_call(nvmlDevice_t d, int fn, gpu_t **g, int64_t *t) {
    if (REFCOUNT <= 0) return NVML_ERROR_UNINITIALIZED;
    reload_if_changed();
    if (d == NULL || d < HANDLES || d >= HANDLES + S.ngpus) return NVML_ERROR_INVALID_ARGUMENT;
    *t = now_us();
    *g = &S.gpu[d->index];
    return injected(d->index, fn, *t);
}

#define DEVICE(fn) gpu_t *g; int64_t t; nvmlReturn_t rc_ = device_call(device, FN_##fn, &g, &t); if (rc_) return rc_
#define FIELD(var, fi) double var; if (!value_at(&g->f[fi], t, &var)) return NVML_ERROR_NOT_SUPPORTED

/* ---------------------------------------------------------------- lifecycle */

static nvmlReturn_t do_init(int fn) {
    pthread_mutex_lock(&LOCK);
    configure_clock();
    INIT_CALLS++;
    nvmlReturn_t rc = NVML_SUCCESS;
    if (!S.loaded) {
        const char *path = getenv("FAKE_NVML_SCENARIO");
        if (!path) {
            fprintf(stderr, "fake-nvml: FAKE_NVML_SCENARIO is not set\n");
            rc = NVML_ERROR_DRIVER_NOT_LOADED;
        } else if (parse_scenario(path, 1) != 0) {
            rc = NVML_ERROR_UNKNOWN;
        }
    }
    if (rc == NVML_SUCCESS) rc = injected(-1, fn, now_us());
    if (rc == NVML_SUCCESS) {
        for (int i = 0; i < MAX_GPUS; i++) HANDLES[i].index = i;
        REFCOUNT++;
    }
    pthread_mutex_unlock(&LOCK);
    return rc;
}

#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlInit_v2(void) { return do_init(FN_nvmlInit_v2); }
EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned int flags) { (void) flags; return do_init(FN_nvmlInitWithFlags); }
#endif
EXPORT nvmlReturn_t nvmlInit(void) { return do_init(FN_nvmlInit); }

EXPORT nvmlReturn_t nvmlShutdown(void) {
    pthread_mutex_lock(&LOCK);
    nvmlReturn_t rc = NVML_SUCCESS;
    if (REFCOUNT <= 0) rc = NVML_ERROR_UNINITIALIZED;
    else { REFCOUNT--; SHUTDOWN_CALLS++; }
    pthread_mutex_unlock(&LOCK);
    return rc;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
        case NVML_SUCCESS: return "Success";
        case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
        case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
        case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
        case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
        case NVML_ERROR_NOT_FOUND: return "Not Found";
        case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
        case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
        case NVML_ERROR_TIMEOUT: return "Timeout";
        case NVML_ERROR_LIBRARY_NOT_FOUND: return "NVML Shared Library Not Found";
        case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
        case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "RM has detected an NVML/RM version mismatch.";
        default: return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    nvmlReturn_t rc = global_call(FN_nvmlSystemGetDriverVersion);
    if (rc) return rc;
    if (!version) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(S.driver) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(version, S.driver);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char *version, unsigned int length) {
    if (REFCOUNT <= 0) return NVML_ERROR_UNINITIALIZED;
    snprintf(version, length, "12.%s", S.driver);
    return NVML_SUCCESS;
}

static nvmlReturn_t get_count(int fn, unsigned int *count) {
    nvmlReturn_t rc = global_call(fn);
    if (rc) return rc;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = (unsigned int) S.ngpus;
    return NVML_SUCCESS;
}
#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) { return get_count(FN_nvmlDeviceGetCount_v2, count); }
#endif
EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int *count) { return get_count(FN_nvmlDeviceGetCount, count); }

static nvmlReturn_t get_handle(int fn, unsigned int index, nvmlDevice_t *device) {
    if (REFCOUNT <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!device || index >= (unsigned int) S.ngpus) return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = injected((int) index, fn, now_us());
    if (rc) return rc;
    *device = &HANDLES[index];
    return NVML_SUCCESS;
}
#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    return get_handle(FN_nvmlDeviceGetHandleByIndex_v2, index, device);
}
#endif
EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t *device) {
    return get_handle(FN_nvmlDeviceGetHandleByIndex, index, device);
}

/* ---------------------------------------------------------------- identity */

EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t device, unsigned int *index) {
    DEVICE(nvmlDeviceGetIndex);
    (void) g;
    *index = (unsigned int) device->index;
    return NVML_SUCCESS;
}

static nvmlReturn_t copy_str(char *dst, unsigned int length, const char *src) {
    if (!dst) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(src) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(dst, src);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    DEVICE(nvmlDeviceGetName);
    return copy_str(name, length, g->name);
}

EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char *uuid, unsigned int length) {
    DEVICE(nvmlDeviceGetUUID);
    return copy_str(uuid, length, g->uuid);
}

static void fill_pci(const gpu_t *g, nvmlPciInfo_t *pci) {
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", g->domain & 0xFFFF, g->bus, g->device);
    pci->domain = g->domain;
    pci->bus = g->bus;
    pci->device = g->device;
    pci->pciDeviceId = 0x20B010DE;
    pci->pciSubSystemId = 0x134F10DE;
    snprintf(pci->busId, sizeof pci->busId, "%s", g->bus_id);
}
#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    DEVICE(nvmlDeviceGetPciInfo_v3);
    fill_pci(g, pci);
    return NVML_SUCCESS;
}
#endif
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v2(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    DEVICE(nvmlDeviceGetPciInfo_v2);
    fill_pci(g, pci);
    return NVML_SUCCESS;
}
EXPORT nvmlReturn_t nvmlDeviceGetPciInfo(nvmlDevice_t device, nvmlPciInfo_t *pci) {
    DEVICE(nvmlDeviceGetPciInfo);
    fill_pci(g, pci);
    return NVML_SUCCESS;
}

/* ---------------------------------------------------------------- readings */

/* v2 semantics: used excludes the driver's reservation; free = total - reserved - used. The v1 call reports
 * used = total - free, i.e. including the reservation, as real drivers do. */
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device, nvmlMemory_t *memory) {
    DEVICE(nvmlDeviceGetMemoryInfo);
    FIELD(total, F_MEM_TOTAL);
    FIELD(used, F_MEM_USED);
    double reserved = 0;
    value_at(&g->f[F_MEM_RESERVED], t, &reserved);
    memory->total = (unsigned long long) total;
    memory->free = (unsigned long long) (total - reserved - used);
    memory->used = memory->total - memory->free;
    return NVML_SUCCESS;
}

#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    DEVICE(nvmlDeviceGetMemoryInfo_v2);
    if (memory->version != nvmlMemory_v2) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    FIELD(total, F_MEM_TOTAL);
    FIELD(used, F_MEM_USED);
    double reserved = 0;
    value_at(&g->f[F_MEM_RESERVED], t, &reserved);
    memory->total = (unsigned long long) total;
    memory->reserved = (unsigned long long) reserved;
    memory->used = (unsigned long long) used;
    memory->free = memory->total - memory->reserved - memory->used;
    return NVML_SUCCESS;
}
#endif

/* FAKE_NVML_COUNT_FILE: the number of nvmlDeviceGetUtilizationRates calls (one per GPU and poll for every client
 * seen so far), written every 8 calls; lets a benchmark count the polls of a program it cannot ask, like nvtop. */
static int COUNT_FD = -2;
static unsigned long UTIL_CALLS;

static void count_util_call(void) {
    if (COUNT_FD == -2) {
        const char *path = getenv("FAKE_NVML_COUNT_FILE");
        COUNT_FD = path ? open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644) : -1;
    }
    if (COUNT_FD < 0 || ++UTIL_CALLS % 8 != 0) return;
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%-20lu\n", UTIL_CALLS);
    if (pwrite(COUNT_FD, buf, (size_t) n, 0) < 0) COUNT_FD = -1;
}

EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device, nvmlUtilization_t *u) {
    count_util_call();
    DEVICE(nvmlDeviceGetUtilizationRates);
    FIELD(gpu, F_UTIL_GPU);
    double mem = 0;
    if (!value_at(&g->f[F_UTIL_MEM], t, &mem)) mem = 0;
    u->gpu = (unsigned int) gpu;
    u->memory = (unsigned int) mem;
    return NVML_SUCCESS;
}

/* The driver's ring of utilisation samples: one every sample period up to now, the last 20 s kept. */
EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t device, nvmlSamplingType_t type, unsigned long long lastSeen,
                                         nvmlValueType_t *valType, unsigned int *count, nvmlSample_t *samples) {
    DEVICE(nvmlDeviceGetSamples);
    int fi = type == NVML_GPU_UTILIZATION_SAMPLES ? F_UTIL_GPU : type == NVML_MEMORY_UTILIZATION_SAMPLES ? F_UTIL_MEM : -1;
    if (fi < 0 || !count || !valType) return fi < 0 ? NVML_ERROR_NOT_SUPPORTED : NVML_ERROR_INVALID_ARGUMENT;
    if (g->f[fi].n == 0) return NVML_ERROR_NOT_SUPPORTED;
    int64_t period = S.sample_period_us;
    int64_t last_k = t / period, first_k = last_k - (20000000 / period) + 1;
    if (first_k < 0) first_k = 0;
    int64_t seen = (int64_t) lastSeen - S.epoch_us; /* scenario µs */
    if (lastSeen != 0 && seen >= first_k * period) {
        int64_t k = seen / period + 1;
        if (k > first_k) first_k = k;
    }
    int64_t n = last_k - first_k + 1;
    if (n <= 0) return NVML_ERROR_NOT_FOUND;
    *valType = NVML_VALUE_TYPE_UNSIGNED_INT;
    if (!samples) { *count = (unsigned int) n; return NVML_SUCCESS; }
    if (*count < n) { *count = (unsigned int) n; return NVML_ERROR_INSUFFICIENT_SIZE; }
    for (int64_t i = 0; i < n; i++) {
        int64_t ts = (first_k + i) * period;
        double v = 0;
        value_at(&g->f[fi], ts, &v);
        double idle = 0;
        /* idle_share: that percentage of each second the GPU waits (for input): its samples there read 0. */
        if (fi == F_UTIL_GPU && value_at(&g->f[F_IDLE_SHARE], ts, &idle) && (double) (ts % 1000000) < idle * 10000.0) v = 0;
        samples[i].timeStamp = (unsigned long long) (S.epoch_us + ts);
        samples[i].sampleValue.ullVal = 0;
        samples[i].sampleValue.uiVal = (unsigned int) v;
    }
    *count = (unsigned int) n;
    return NVML_SUCCESS;
}

static int clock_field(nvmlClockType_t type, int max) {
    switch (type) {
        case NVML_CLOCK_SM: return max ? F_MAX_SM_CLOCK : F_SM_CLOCK;
        case NVML_CLOCK_MEM: return max ? F_MAX_MEM_CLOCK : F_MEM_CLOCK;
        case NVML_CLOCK_GRAPHICS: return max ? F_MAX_SM_CLOCK : F_GRAPHICS_CLOCK;
        default: return -1;
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock) {
    DEVICE(nvmlDeviceGetClockInfo);
    int fi = clock_field(type, 0);
    if (fi < 0) return NVML_ERROR_NOT_SUPPORTED;
    FIELD(v, fi);
    *clock = (unsigned int) v;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t device, nvmlClockType_t type, unsigned int *clock) {
    DEVICE(nvmlDeviceGetMaxClockInfo);
    int fi = clock_field(type, 1);
    if (fi < 0) return NVML_ERROR_NOT_SUPPORTED;
    FIELD(v, fi);
    *clock = (unsigned int) v;
    return NVML_SUCCESS;
}

#if !defined(FAKE_LEGACY) && !defined(FAKE_STRIDE32)
nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons);
EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t device, unsigned long long *reasons) {
    DEVICE(nvmlDeviceGetCurrentClocksEventReasons);
    FIELD(v, F_REASONS);
    *reasons = (unsigned long long) v;
    return NVML_SUCCESS;
}
#endif

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t device, unsigned long long *reasons) {
    DEVICE(nvmlDeviceGetCurrentClocksThrottleReasons);
    FIELD(v, F_REASONS);
    *reasons = (unsigned long long) v;
    return NVML_SUCCESS;
}

#define SIMPLE_UINT(fn, fi) \
    EXPORT nvmlReturn_t fn(nvmlDevice_t device, unsigned int *out) { \
        DEVICE(fn); FIELD(v, fi); *out = (unsigned int) v; return NVML_SUCCESS; }
SIMPLE_UINT(nvmlDeviceGetPowerUsage, F_POWER)
SIMPLE_UINT(nvmlDeviceGetEnforcedPowerLimit, F_POWER_LIMIT)

EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long *energy) {
    DEVICE(nvmlDeviceGetTotalEnergyConsumption);
    FIELD(v, F_ENERGY);
    *energy = (unsigned long long) v;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int *temp) {
    DEVICE(nvmlDeviceGetTemperature);
    if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    FIELD(v, F_TEMP);
    *temp = (unsigned int) v;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t device, nvmlPstates_t *p) {
    DEVICE(nvmlDeviceGetPerformanceState);
    FIELD(v, F_PSTATE);
    *p = (nvmlPstates_t) (int) v;
    return NVML_SUCCESS;
}

/* ---------------------------------------------------------------- processes */

/* True when /proc/PID/environ holds every VAR=VALUE of the comma-separated selector. */
static int environ_matches(unsigned int pid, const char *selector) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%u/environ", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    static __thread char env[65536];
    ssize_t n = read(fd, env, sizeof env - 2);
    close(fd);
    if (n <= 0) return 0;
    env[n] = 0;
    env[n + 1] = 0;
    char want[160];
    snprintf(want, sizeof want, "%s", selector);
    char *save = NULL;
    for (char *pair = strtok_r(want, ",", &save); pair; pair = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (char *e = env; e < env + n && *e; e += strlen(e) + 1) {
            if (strcmp(e, pair) == 0) { found = 1; break; }
        }
        if (!found) return 0;
    }
    return 1;
}

static unsigned int parent_of(unsigned int pid) {
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%u/stat", pid);
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *close_paren = strrchr(buf, ')');
    unsigned int ppid = 0;
    if (close_paren) sscanf(close_paren + 2, "%*c %u", &ppid);
    return ppid;
}

/* The live process a selector names: the lowest PID whose environment matches and whose parent's does not (the
 * rank itself, not its DataLoader workers, which inherit its environment); 0 when there is none yet. */
static unsigned int resolve_selector(const char *selector) {
    DIR *d = opendir("/proc");
    if (!d) return 0;
    unsigned int best = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (!isdigit((unsigned char) de->d_name[0])) continue;
        unsigned int pid = (unsigned int) strtoul(de->d_name, NULL, 10);
        if ((best && pid >= best) || !environ_matches(pid, selector)) continue;
        unsigned int ppid = parent_of(pid);
        if (ppid > 1 && environ_matches(ppid, selector)) continue;
        best = pid;
    }
    closedir(d);
    return best;
}

/* The process list at time t with selectors resolved to live PIDs (unresolved ones left out). */
static int procs_now(const gpu_t *g, int64_t t, proc_t *out) {
    const proc_key_t *pk = procs_at(g, t);
    int n = 0;
    for (int i = 0; pk && i < pk->n; i++) {
        out[n] = pk->p[i];
        if (out[n].env[0]) {
            out[n].pid = resolve_selector(out[n].env);
            if (!out[n].pid) continue;
        }
        n++;
    }
    return n;
}

/* Count first (INSUFFICIENT_SIZE with the count when the caller's room is short), then fill entries of the
 * variant's stride. */
static nvmlReturn_t list_processes(gpu_t *g, int64_t t, unsigned int *count, void *infos, size_t stride) {
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    proc_t procs[MAX_PROCS];
    unsigned int n = (unsigned int) procs_now(g, t, procs);
    if (*count < n || (n > 0 && !infos)) { *count = n; return NVML_ERROR_INSUFFICIENT_SIZE; }
    for (unsigned int i = 0; i < n; i++) {
        unsigned char *e = (unsigned char *) infos + i * stride;
        memset(e, 0, stride);
        unsigned int pid = procs[i].pid;
        unsigned long long mem = procs[i].mem;
        memcpy(e, &pid, 4);
        memcpy(e + 8, &mem, 8);
        if (stride >= 24) {
            unsigned int none = 0xFFFFFFFFu;
            memcpy(e + 16, &none, 4);
            memcpy(e + 20, &none, 4);
        }
    }
    *count = n;
    return NVML_SUCCESS;
}

#if !defined(FAKE_LEGACY) && !defined(FAKE_NO_V3_PROCS)
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_t *infos) {
    DEVICE(nvmlDeviceGetComputeRunningProcesses_v3);
#ifdef FAKE_STRIDE32
    return list_processes(g, t, count, infos, sizeof(fake_process_info_r535_t));
#else
    return list_processes(g, t, count, infos, sizeof(nvmlProcessInfo_t));
#endif
}
/* Only probed for by callers (nvitop's stride rule); the signature's struct is not in this header. */
nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device, void *info);
EXPORT nvmlReturn_t nvmlDeviceGetConfComputeMemSizeInfo(nvmlDevice_t device, void *info) {
    (void) device; (void) info;
    return NVML_ERROR_NOT_SUPPORTED;
}
#endif
#if !defined(FAKE_LEGACY) && !defined(FAKE_NO_V3_PROCS) && !defined(FAKE_STRIDE32)
nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, void *plist);
EXPORT nvmlReturn_t nvmlDeviceGetRunningProcessDetailList(nvmlDevice_t device, void *plist) {
    (void) device; (void) plist;
    return NVML_ERROR_NOT_SUPPORTED;
}
#endif
#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v2_t *infos) {
    DEVICE(nvmlDeviceGetComputeRunningProcesses_v2);
    return list_processes(g, t, count, infos, sizeof(nvmlProcessInfo_v2_t));
}
#endif
EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses(nvmlDevice_t device, unsigned int *count, nvmlProcessInfo_v1_t *infos) {
    DEVICE(nvmlDeviceGetComputeRunningProcesses);
    return list_processes(g, t, count, infos, sizeof(nvmlProcessInfo_v1_t));
}

/* One sample per process that has utilisation in the scenario, stamped "now"; NOT_FOUND when the caller has
 * seen it already or there is none. */
EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t device, nvmlProcessUtilizationSample_t *util,
                                                    unsigned int *count, unsigned long long lastSeen) {
    DEVICE(nvmlDeviceGetProcessUtilization);
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    proc_t procs[MAX_PROCS];
    int np = procs_now(g, t, procs);
    unsigned long long stamp = (unsigned long long) (S.epoch_us + t);
    unsigned int n = 0;
    if (stamp > lastSeen) for (int i = 0; i < np; i++) if (procs[i].sm >= 0) n++;
    if (n == 0) return NVML_ERROR_NOT_FOUND;
    if (!util || *count < n) { *count = n; return NVML_ERROR_INSUFFICIENT_SIZE; }
    unsigned int j = 0;
    for (int i = 0; i < np; i++) {
        if (procs[i].sm < 0) continue;
        util[j] = (nvmlProcessUtilizationSample_t) {
            .pid = procs[i].pid, .timeStamp = stamp, .smUtil = (unsigned int) procs[i].sm,
            .memUtil = (unsigned int) (procs[i].memutil < 0 ? 0 : procs[i].memutil), .encUtil = 0, .decUtil = 0};
        j++;
    }
    *count = n;
    return NVML_SUCCESS;
}

/* ---------------------------------------------------------------- interconnect and activity counters */

/* KB/s over the driver's 20 ms counter window; the real call blocks for that window (pcie_window_ms). */
EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int *value) {
    DEVICE(nvmlDeviceGetPcieThroughput);
    if (!value) return NVML_ERROR_INVALID_ARGUMENT;
    int fi = counter == NVML_PCIE_UTIL_TX_BYTES ? F_PCIE_TX : counter == NVML_PCIE_UTIL_RX_BYTES ? F_PCIE_RX : -1;
    if (fi < 0) return NVML_ERROR_INVALID_ARGUMENT;
    FIELD(v, fi);
    if (S.pcie_window_us > 0) usleep((useconds_t) S.pcie_window_us);
    *value = (unsigned int) v;
    return NVML_SUCCESS;
}

#ifndef FAKE_LEGACY
/* NVLink throughput counters (KiB since the counter started): scopeId is a link, or UINT_MAX for all links
 * summed, as NVML's header says. The scenario gives the all-links total; link i gets an even share (link 0 the
 * remainder). Other fields answer NOT_SUPPORTED in their entry; the call itself succeeds. */
EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device, int valuesCount, nvmlFieldValue_t *values) {
    DEVICE(nvmlDeviceGetFieldValues);
    if (!values || valuesCount < 0) return NVML_ERROR_INVALID_ARGUMENT;
    for (int i = 0; i < valuesCount; i++) {
        nvmlFieldValue_t *fv = &values[i];
        fv->timestamp = (long long) (S.epoch_us + t);
        fv->latencyUsec = 0;
        fv->valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
        fv->value.ullVal = 0;
        int fi = fv->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX ? F_NVLINK_TX
               : fv->fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX ? F_NVLINK_RX : -1;
        double total;
        if (fi < 0 || !value_at(&g->f[fi], t, &total)) { fv->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; continue; }
        unsigned long long kib = (unsigned long long) total, links = (unsigned long long) g->nvlink_links;
        if (fv->scopeId == 0xFFFFFFFFu) {
            if (!S.nvlink_aggregate) { fv->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT; continue; }
            fv->value.ullVal = kib;
        } else if (fv->scopeId < links) {
            fv->value.ullVal = kib / links + (fv->scopeId == 0 ? kib % links : 0);
        } else {
            fv->nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
            continue;
        }
        fv->nvmlReturn = NVML_SUCCESS;
    }
    return NVML_SUCCESS;
}
#endif

#if !defined(FAKE_LEGACY) && !defined(FAKE_NO_V3_PROCS)
/* GPM. A GPU supports it when its scenario gives any gpm_* field. A sample records the device and scenario time;
 * a metric over two samples is the field's mean over the time between them (so a dip between polls shows). */
#define GPM_MAGIC 0x67706d31
struct nvmlGpmSample_st { int magic; int device; int taken; int64_t t; };
static long GPM_LIVE;

static int gpm_supported(const gpu_t *g) {
    for (int f = F_GPM_FIRST; f < F_COUNT; f++) if (g->f[f].n > 0) return 1;
    return 0;
}

/* Value within segment i (between key i and key i+1; -1 before the first key, n-1 after the last). */
static double segment_value(const series_t *s, int i, double x) {
    if (i < 0) return s->k[0].v;
    if (i >= s->n - 1 || !s->k[i + 1].ramp) return s->k[i].v;
    const key_t_ *a = &s->k[i], *b = &s->k[i + 1];
    return a->v + (b->v - a->v) * (x - (double) a->t) / (double) (b->t - a->t);
}

/* Exact mean of the field over [t1, t2): steps and linear ramps integrate piecewise, O(keys). */
static double mean_over(const series_t *s, int64_t t1, int64_t t2) {
    double sum = 0;
    for (int i = -1; i < s->n; i++) {
        double lo = i < 0 ? -1e300 : (double) s->k[i].t, hi = i + 1 < s->n ? (double) s->k[i + 1].t : 1e300;
        if (lo < (double) t1) lo = (double) t1;
        if (hi > (double) t2) hi = (double) t2;
        if (hi <= lo) continue;
        sum += (segment_value(s, i, lo) + segment_value(s, i, hi)) / 2 * (hi - lo);
    }
    return sum / (double) (t2 - t1);
}

EXPORT nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport) {
    DEVICE(nvmlGpmQueryDeviceSupport);
    if (!gpmSupport) return NVML_ERROR_INVALID_ARGUMENT;
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    gpmSupport->isSupportedDevice = (unsigned int) gpm_supported(g);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample) {
    nvmlReturn_t rc = global_call(FN_nvmlGpmSampleAlloc);
    if (rc) return rc;
    if (!gpmSample) return NVML_ERROR_INVALID_ARGUMENT;
    struct nvmlGpmSample_st *smp = calloc(1, sizeof *smp);
    if (!smp) return NVML_ERROR_MEMORY;
    smp->magic = GPM_MAGIC;
    __atomic_add_fetch(&GPM_LIVE, 1, __ATOMIC_RELAXED);
    *gpmSample = smp;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
    if (!gpmSample || gpmSample->magic != GPM_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
    gpmSample->magic = 0;
    free(gpmSample);
    __atomic_sub_fetch(&GPM_LIVE, 1, __ATOMIC_RELAXED);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
    DEVICE(nvmlGpmSampleGet);
    if (!gpmSample || gpmSample->magic != GPM_MAGIC) return NVML_ERROR_INVALID_ARGUMENT;
    if (!gpm_supported(g)) return NVML_ERROR_NOT_SUPPORTED;
    gpmSample->device = device->index;
    gpmSample->t = t;
    gpmSample->taken = 1;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet) {
    if (REFCOUNT <= 0) return NVML_ERROR_UNINITIALIZED;
    if (!metricsGet) return NVML_ERROR_INVALID_ARGUMENT;
    if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    nvmlGpmSample_t a = metricsGet->sample1, b = metricsGet->sample2;
    if (metricsGet->numMetrics > NVML_GPM_METRIC_MAX || !a || !b || a->magic != GPM_MAGIC || b->magic != GPM_MAGIC
        || !a->taken || !b->taken || a->device != b->device || b->t <= a->t)
        return NVML_ERROR_INVALID_ARGUMENT;
    nvmlReturn_t rc = injected(a->device, FN_nvmlGpmMetricsGet, now_us());
    if (rc) return rc;
    const gpu_t *g = &S.gpu[a->device];
    for (unsigned int i = 0; i < metricsGet->numMetrics; i++) {
        nvmlGpmMetric_t *m = &metricsGet->metrics[i];
        int fi = -1;
        for (size_t j = 0; j < sizeof GPM_FIELDS / sizeof GPM_FIELDS[0]; j++) if (GPM_FIELDS[j].id == m->metricId) fi = GPM_FIELDS[j].field;
        m->metricInfo.shortName = m->metricInfo.longName = m->metricInfo.unit = NULL;
        if (fi < 0 || g->f[fi].n == 0) { m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED; m->value = 0; continue; }
        m->value = mean_over(&g->f[fi], a->t, b->t);
        m->nvmlReturn = NVML_SUCCESS;
    }
    return NVML_SUCCESS;
}

/* GPM samples allocated and not yet freed: 0 when every sample was released. */
EXPORT long fake_nvml_gpm_samples_live(void) { return __atomic_load_n(&GPM_LIVE, __ATOMIC_RELAXED); }
#else
EXPORT long fake_nvml_gpm_samples_live(void) { return 0; }
#endif

/* ---------------------------------------------------------------- events */

EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t *set) {
    nvmlReturn_t rc = global_call(FN_nvmlEventSetCreate);
    if (rc) return rc;
    pthread_mutex_lock(&LOCK);
    for (int i = 0; i < MAX_SETS; i++) {
        if (!SETS[i].used) {
            memset(&SETS[i], 0, sizeof SETS[i]);
            SETS[i].used = 1;
            *set = &SETS[i];
            pthread_mutex_unlock(&LOCK);
            return NVML_SUCCESS;
        }
    }
    pthread_mutex_unlock(&LOCK);
    return NVML_ERROR_INSUFFICIENT_RESOURCES;
}

#define SUPPORTED_EVENTS (nvmlEventTypeXidCriticalError | nvmlEventTypeDoubleBitEccError | nvmlEventTypeSingleBitEccError \
                          | nvmlEventTypePState | nvmlEventTypeClock)

EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(nvmlDevice_t device, unsigned long long *types) {
    DEVICE(nvmlDeviceGetSupportedEventTypes);
    (void) g;
    *types = SUPPORTED_EVENTS;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device, unsigned long long types, nvmlEventSet_t set) {
    DEVICE(nvmlDeviceRegisterEvents);
    (void) g;
    if (!set || set < SETS || set >= SETS + MAX_SETS || !set->used) return NVML_ERROR_INVALID_ARGUMENT;
    if (types & ~SUPPORTED_EVENTS) return NVML_ERROR_NOT_SUPPORTED;
    pthread_mutex_lock(&LOCK);
    set->mask[device->index] |= types;
    pthread_mutex_unlock(&LOCK);
    return NVML_SUCCESS;
}

/* Delivers the oldest due, undelivered event registered in the set; otherwise waits up to the timeout (polling
 * the scenario clock, which a test may advance meanwhile) and answers TIMEOUT. */
static nvmlReturn_t wait_event(int fn, nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    nvmlReturn_t rc = global_call(fn);
    if (rc) return rc;
    if (!set || set < SETS || set >= SETS + MAX_SETS || !set->used || !data) return NVML_ERROR_INVALID_ARGUMENT;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        int64_t t = now_us();
        pthread_mutex_lock(&LOCK);
        for (int i = 0; i < S.nevents; i++) {
            const event_t *e = &S.events[i];
            if (e->t > t || set->delivered[i] || !(set->mask[e->gpu] & e->type)) continue;
            set->delivered[i] = 1;
            memset(data, 0, sizeof *data);
            data->device = &HANDLES[e->gpu];
            data->eventType = e->type;
            data->eventData = e->data;
            data->gpuInstanceId = 0xFFFFFFFFu;
            data->computeInstanceId = 0xFFFFFFFFu;
            pthread_mutex_unlock(&LOCK);
            return NVML_SUCCESS;
        }
        pthread_mutex_unlock(&LOCK);
        clock_gettime(CLOCK_MONOTONIC, &now);
        long waited = (now.tv_sec - start.tv_sec) * 1000L + (now.tv_nsec - start.tv_nsec) / 1000000L;
        if (waited >= (long) timeoutms || REFCOUNT <= 0) return NVML_ERROR_TIMEOUT;
        usleep(5000);
    }
}
#ifndef FAKE_LEGACY
EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    return wait_event(FN_nvmlEventSetWait_v2, set, data, timeoutms);
}
#endif
EXPORT nvmlReturn_t nvmlEventSetWait(nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms) {
    return wait_event(FN_nvmlEventSetWait, set, data, timeoutms);
}

EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
    if (!set || set < SETS || set >= SETS + MAX_SETS || !set->used) return NVML_ERROR_INVALID_ARGUMENT;
    pthread_mutex_lock(&LOCK);
    set->used = 0;
    pthread_mutex_unlock(&LOCK);
    return NVML_SUCCESS;
}

/* ---------------------------------------------------------------- other readings (peer tools such as nvtop) */

/* Readings trainwatch does not take but other NVML clients bind at start: present, answering NOT_SUPPORTED
 * (as on a data-centre GPU without fans or video engines in use), or no graphics processes. */
static nvmlReturn_t unsupported(nvmlDevice_t device) {
    if (REFCOUNT <= 0) return NVML_ERROR_UNINITIALIZED;
    if (device == NULL || device < HANDLES || device >= HANDLES + S.ngpus) return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_ERROR_NOT_SUPPORTED;
}
EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { (void) v; return unsupported(d); }
EXPORT nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { (void) v; return unsupported(d); }
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) { (void) v; return unsupported(d); }
EXPORT nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) { (void) v; return unsupported(d); }
EXPORT nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t d, unsigned int *v) { (void) v; return unsupported(d); }
EXPORT nvmlReturn_t nvmlDeviceGetTemperatureThreshold(nvmlDevice_t d, nvmlTemperatureThresholds_t t, unsigned int *v) {
    (void) t; (void) v; return unsupported(d);
}
EXPORT nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *p) {
    (void) u; (void) p; return unsupported(d);
}
EXPORT nvmlReturn_t nvmlDeviceGetDecoderUtilization(nvmlDevice_t d, unsigned int *u, unsigned int *p) {
    (void) u; (void) p; return unsupported(d);
}
EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses(nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_v1_t *infos) {
    (void) infos;
    nvmlReturn_t rc = unsupported(d);
    if (rc != NVML_ERROR_NOT_SUPPORTED) return rc;
    if (!count) return NVML_ERROR_INVALID_ARGUMENT;
    *count = 0;
    return NVML_SUCCESS;
}

/* ---------------------------------------------------------------- test controls (not NVML) */

/* Sets the scenario clock (switches to fixed time). */
EXPORT void fake_nvml_set_time(double seconds) {
    pthread_mutex_lock(&LOCK);
    configure_clock();
    WALL_MODE = 0;
    __atomic_store_n(&FIXED_US, (int64_t) (seconds * 1e6), __ATOMIC_RELAXED);
    pthread_mutex_unlock(&LOCK);
}

/* Loads a scenario now, replacing the current one; 0 on success. Handles stay valid. */
EXPORT int fake_nvml_load_scenario(const char *path) {
    pthread_mutex_lock(&LOCK);
    configure_clock();
    int rc = parse_scenario(path, 1);
    for (int i = 0; i < MAX_SETS; i++) memset(SETS[i].delivered, 0, sizeof SETS[i].delivered);
    pthread_mutex_unlock(&LOCK);
    return rc;
}

/* nvmlInit calls that succeeded minus nvmlShutdown calls: 0 when every acquire was released. */
EXPORT int fake_nvml_refcount(void) { return REFCOUNT; }
EXPORT long fake_nvml_init_calls(void) { return INIT_CALLS; }
EXPORT long fake_nvml_shutdown_calls(void) { return SHUTDOWN_CALLS; }
