/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Issue 36 without vkcu: N contexts of one FFmpeg compute encoder
 * (prores_ks_vulkan or ffv1_vulkan) on one Vulkan device, each fed by its
 * own thread with every Nth frame, as vkcu's encoder instances are, and
 * each submitting on a compute queue of its own or all on queue 0.
 *
 *   prof_encoders_gpu INPUT [-n N] [-f FRAMES] [-q own|locked|shared|ffmpeg|devices]
 *                     [-d DEPTH] [-e ENCODER[,ENCODER]] [-D DEVICE] [-o K=V:K=V]
 *
 * The device is FFmpeg's own (av_hwdevice_ctx_create, every queue of every
 * family). Context k gets a device context of its own wrapping the same
 * VkDevice (what vkcu's lanes do, src/gpu/vkdev_lanes.c, written anew here
 * with FFmpeg's API alone): its vkGetDeviceQueue maps every queue of the
 * compute family to queue k (-q own) or 0 (-q shared), and its queue lock
 * locks that queue through the first context, so every user of a queue
 * shares one mutex (-q ffmpeg: every context on FFmpeg's device itself,
 * whose execution context i submits on compute queue i, so one context
 * with -d DEPTH encodes DEPTH frames side by side on DEPTH queues, where
 * the encoder honours it: prores_ks_vulkan in 8.1 makes one execution
 * context whatever async_depth says; -q devices: each context on a
 * VkDevice of its own, made by FFmpeg, so that nothing of FFmpeg's is
 * shared between them; -q locked: as own, and every submission of every
 * context, on whichever queue, holds one process-wide mutex: the
 * submissions of two queues never run on the host at once, while their
 * work still runs side by side on the GPU, which is the workaround NVIDIA
 * named for a driver bug where two queues of one VkDevice submitting at
 * the same time break some internal synchronisation). Its frames come
 * from a frames context made there, filled by FFmpeg's upload
 * (av_hwframe_transfer_data) from frames decoded in software and converted
 * beforehand, so no frame is shared between the contexts and nothing of
 * vkcu runs.
 *
 * Prints one line per frame in presentation order, "FRAME SIZE MD5" of its
 * packet, and on stderr the rate. ProRes is deterministic, so each run's
 * lines must equal those of one context (-n 1); a line that differs is a
 * wrong packet. (FFV1's packets are not byte-deterministic; for it this
 * program is a load generator.) -e a,b gives context k the encoder k % 2 of
 * the list (with prores_ks_vulkan first, the even frames are ProRes packets
 * encoded while another encoder runs beside them). -o sets the encoder's options (for
 * instance bits_per_mb=8192, with which prores_ks_vulkan never enters its
 * over-quantiser loop). tools/prof/encoders-ffmpeg-gpu.sh runs it.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/dict.h>
#include <libavutil/hwcontext.h>
#include <libavutil/hwcontext_vulkan.h>
#include <libavutil/log.h>
#include <libavutil/macros.h>
#include <libavutil/md5.h>
#include <libavutil/opt.h>
#include <libswscale/swscale.h>

#define MAX_CTX 8

static PFN_vkGetInstanceProcAddr real_gipa;
static PFN_vkGetDeviceProcAddr real_gdpa;
static PFN_vkGetDeviceQueue real_gdq;
static uint32_t compute_qf, compute_nb;
static uint32_t ctx_queue[MAX_CTX]; /* the compute queue context k submits on */
static AVBufferRef *master;
static int submit_lock; /* -q locked */
static pthread_mutex_t submit_mutex = PTHREAD_MUTEX_INITIALIZER;

static uint32_t remap(int k, uint32_t qf, uint32_t index)
{
    return qf == compute_qf ? ctx_queue[k] : index;
}

#define CTX_FNS(k)                                                                                   \
    static VKAPI_ATTR void VKAPI_CALL gdq_##k(VkDevice d, uint32_t qf, uint32_t i, VkQueue *q)       \
    {                                                                                                \
        real_gdq(d, qf, remap(k, qf, i), q);                                                         \
    }                                                                                                \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gdpa_##k(VkDevice d, const char *name)          \
    {                                                                                                \
        return !strcmp(name, "vkGetDeviceQueue") ? (PFN_vkVoidFunction)gdq_##k : real_gdpa(d, name); \
    }                                                                                                \
    static VKAPI_ATTR PFN_vkVoidFunction VKAPI_CALL gipa_##k(VkInstance inst, const char *name)     \
    {                                                                                                \
        if (!strcmp(name, "vkGetDeviceProcAddr"))                                                    \
            return (PFN_vkVoidFunction)gdpa_##k;                                                     \
        if (!strcmp(name, "vkGetDeviceQueue"))                                                       \
            return (PFN_vkVoidFunction)gdq_##k;                                                      \
        return real_gipa(inst, name);                                                                \
    }
CTX_FNS(0)
CTX_FNS(1)
CTX_FNS(2)
CTX_FNS(3)
CTX_FNS(4)
CTX_FNS(5)
CTX_FNS(6)
CTX_FNS(7)
static const PFN_vkGetInstanceProcAddr ctx_gipa[MAX_CTX] = { gipa_0, gipa_1, gipa_2, gipa_3,
                                                             gipa_4, gipa_5, gipa_6, gipa_7 };

/* lock_queue and unlock_queue are deprecated in FFmpeg 8.1, and still what it calls */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void ctx_lock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    AVHWDeviceContext *m = (AVHWDeviceContext *)master->data;
    AVVulkanDeviceContext *mh = m->hwctx;
    if (submit_lock)
        pthread_mutex_lock(&submit_mutex);
    mh->lock_queue(m, qf, remap((int)(intptr_t)ctx->user_opaque, qf, index));
}

static void ctx_unlock(AVHWDeviceContext *ctx, uint32_t qf, uint32_t index)
{
    AVHWDeviceContext *m = (AVHWDeviceContext *)master->data;
    AVVulkanDeviceContext *mh = m->hwctx;
    mh->unlock_queue(m, qf, remap((int)(intptr_t)ctx->user_opaque, qf, index));
    if (submit_lock)
        pthread_mutex_unlock(&submit_mutex);
}

/* A device context of context k: the first one's VkDevice, queues mapped. */
static int ctx_device(int k, AVBufferRef **out)
{
    AVBufferRef *ref = av_hwdevice_ctx_alloc(AV_HWDEVICE_TYPE_VULKAN);
    if (!ref)
        return AVERROR(ENOMEM);
    AVHWDeviceContext *dev = (AVHWDeviceContext *)ref->data;
    AVVulkanDeviceContext *hw = dev->hwctx;
    *hw = *(AVVulkanDeviceContext *)((AVHWDeviceContext *)master->data)->hwctx;
    hw->get_proc_addr = ctx_gipa[k];
    hw->lock_queue = ctx_lock;
    hw->unlock_queue = ctx_unlock;
    dev->user_opaque = (void *)(intptr_t)k;
    int ret = av_hwdevice_ctx_init(ref);
    if (ret < 0)
        av_buffer_unref(&ref);
    *out = ref;
    return ret;
}
#pragma GCC diagnostic pop

typedef struct {
    int k, n, nframes;
    AVCodecContext *enc;
    AVBufferRef *frames;
    AVFrame **src;
    int *size;
    uint8_t (*md5)[16];
    int err;
} worker;

static int drain(worker *w, AVPacket *pkt)
{
    int ret;
    while ((ret = avcodec_receive_packet(w->enc, pkt)) >= 0) {
        if (pkt->pts >= 0 && pkt->pts < w->nframes) {
            w->size[pkt->pts] = pkt->size;
            av_md5_sum(w->md5[pkt->pts], pkt->data, pkt->size);
        }
        av_packet_unref(pkt);
    }
    return ret == AVERROR(EAGAIN) || ret == AVERROR_EOF ? 0 : ret;
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    AVPacket *pkt = av_packet_alloc();
    int ret = pkt ? 0 : AVERROR(ENOMEM);
    for (int i = w->k; ret >= 0 && i < w->nframes; i += w->n) {
        AVFrame *hw = av_frame_alloc();
        if (!hw || (ret = av_hwframe_get_buffer(w->frames, hw, 0)) < 0 ||
            (ret = av_hwframe_transfer_data(hw, w->src[i], 0)) < 0) {
            ret = ret < 0 ? ret : AVERROR(ENOMEM);
            av_frame_free(&hw);
            break;
        }
        hw->pts = i;
        hw->duration = 1;
        ret = avcodec_send_frame(w->enc, hw);
        av_frame_free(&hw);
        if (ret >= 0)
            ret = drain(w, pkt);
    }
    if (ret >= 0 && (ret = avcodec_send_frame(w->enc, NULL)) >= 0)
        ret = drain(w, pkt);
    av_packet_free(&pkt);
    w->err = ret;
    return NULL;
}

/* Decodes the first `want` frames of path, converted to fmt. */
static int load_frames(const char *path, int want, enum AVPixelFormat fmt, AVFrame **out, int *w, int *h)
{
    AVFormatContext *fc = NULL;
    AVCodecContext *dec = NULL;
    struct SwsContext *sws = NULL;
    AVPacket *pkt = av_packet_alloc();
    AVFrame *f = av_frame_alloc();
    const AVCodec *codec = NULL;
    int got = 0, ret = AVERROR(ENOMEM), st;
    if (!pkt || !f || (ret = avformat_open_input(&fc, path, NULL, NULL)) < 0 ||
        (ret = avformat_find_stream_info(fc, NULL)) < 0 ||
        (ret = st = av_find_best_stream(fc, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0)) < 0)
        goto end;
    if (!(dec = avcodec_alloc_context3(codec)) ||
        (ret = avcodec_parameters_to_context(dec, fc->streams[st]->codecpar)) < 0 ||
        (ret = avcodec_open2(dec, codec, NULL)) < 0)
        goto end;
    while (got < want) {
        int eof = av_read_frame(fc, pkt) < 0;
        if (!eof && pkt->stream_index != st) {
            av_packet_unref(pkt);
            continue;
        }
        ret = avcodec_send_packet(dec, eof ? NULL : pkt);
        av_packet_unref(pkt);
        if (ret < 0 && ret != AVERROR_EOF)
            goto end;
        while (got < want && (ret = avcodec_receive_frame(dec, f)) >= 0) {
            if (!sws && !(sws = sws_getContext(f->width, f->height, f->format, f->width, f->height, fmt,
                                               SWS_BICUBIC, NULL, NULL, NULL))) {
                ret = AVERROR(EINVAL);
                goto end;
            }
            AVFrame *c = av_frame_alloc();
            if (!c) {
                ret = AVERROR(ENOMEM);
                goto end;
            }
            c->format = fmt;
            c->width = *w = f->width;
            c->height = *h = f->height;
            out[got++] = c;
            if ((ret = av_frame_get_buffer(c, 0)) < 0 ||
                (ret = sws_scale_frame(sws, c, f)) < 0)
                goto end;
            av_frame_unref(f);
        }
        if (ret == AVERROR_EOF || (eof && ret == AVERROR(EAGAIN)))
            break;
    }
    ret = got;
end:
    sws_freeContext(sws);
    avcodec_free_context(&dec);
    avformat_close_input(&fc);
    av_packet_free(&pkt);
    av_frame_free(&f);
    return ret;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int n = 4, nframes = 300, depth = 1, own = 1, plain = 0, devices = 0, opt;
    const char *encname = "prores_ks_vulkan", *device = "0", *encopts = NULL;
    char encbuf[128];
    while ((opt = getopt(argc, argv, "n:f:q:d:e:D:o:")) != -1) {
        switch (opt) {
        case 'n': n = atoi(optarg); break;
        case 'f': nframes = atoi(optarg); break;
        case 'q':
            submit_lock = !strcmp(optarg, "locked");
            own = !strcmp(optarg, "own") || submit_lock;
            plain = !strcmp(optarg, "ffmpeg");
            devices = !strcmp(optarg, "devices");
            break;
        case 'd': depth = atoi(optarg); break;
        case 'e': encname = optarg; break;
        case 'D': device = optarg; break;
        case 'o': encopts = optarg; break;
        default: optind = argc + 1; break;
        }
    }
    if (optind != argc - 1 || n < 1 || n > MAX_CTX || nframes < 1 || depth < 1) {
        fprintf(stderr, "usage: %s INPUT [-n 1-%d] [-f FRAMES] [-q own|locked|shared|ffmpeg|devices] [-d DEPTH] [-e ENCODER[,ENCODER]] [-D DEVICE] [-o K=V:K=V]\n",
                argv[0], MAX_CTX);
        return 2;
    }
    av_log_set_level(AV_LOG_ERROR);
    snprintf(encbuf, sizeof(encbuf), "%s", encname);
    char *second = strchr(encbuf, ',');
    if (second)
        *second++ = 0;
    const char *encnames[2] = { encbuf, second ? second : encbuf };
    const AVCodec *codecs[2];
    for (int e = 0; e < 2; e++) {
        if (!(codecs[e] = avcodec_find_encoder_by_name(encnames[e]))) {
            fprintf(stderr, "%s: no encoder %s in this FFmpeg\n", argv[0], encnames[e]);
            return 2;
        }
    }
    enum AVPixelFormat sw = strstr(encname, "prores") ? AV_PIX_FMT_YUV422P10 : AV_PIX_FMT_YUV420P;
    AVFrame **src = calloc((size_t)nframes, sizeof(*src));
    int *size = calloc((size_t)nframes, sizeof(*size));
    uint8_t(*md5)[16] = calloc((size_t)nframes, sizeof(*md5));
    int width = 0, height = 0, ret = src && size && md5 ? 0 : AVERROR(ENOMEM);
    if (ret >= 0 && (ret = load_frames(argv[optind], nframes, sw, src, &width, &height)) <= 0) {
        fprintf(stderr, "%s: %s: no frames decoded (%s)\n", argv[0], argv[optind], av_err2str(ret));
        return 1;
    }
    nframes = ret;
    if ((ret = av_hwdevice_ctx_create(&master, AV_HWDEVICE_TYPE_VULKAN, device, NULL, 0)) < 0) {
        fprintf(stderr, "%s: no Vulkan device %s: %s\n", argv[0], device, av_err2str(ret));
        return 1;
    }
    AVVulkanDeviceContext *mh = ((AVHWDeviceContext *)master->data)->hwctx;
    real_gipa = mh->get_proc_addr;
    real_gdpa = (PFN_vkGetDeviceProcAddr)real_gipa(mh->inst, "vkGetDeviceProcAddr");
    real_gdq = (PFN_vkGetDeviceQueue)real_gdpa(mh->act_dev, "vkGetDeviceQueue");
    for (int i = 0; i < mh->nb_qf; i++)
        if (mh->qf[i].flags & VK_QUEUE_COMPUTE_BIT) { /* FFmpeg's choice too (ff_vk_qf_find: the first) */
            compute_qf = mh->qf[i].idx;
            compute_nb = (uint32_t)mh->qf[i].num;
            break;
        }
    worker wk[MAX_CTX];
    pthread_t th[MAX_CTX];
    for (int k = 0; k < n; k++) {
        AVBufferRef *dev = NULL;
        ctx_queue[k] = own && compute_nb ? (uint32_t)k % compute_nb : 0;
        wk[k] = (worker){ .k = k, .n = n, .nframes = nframes, .src = src, .size = size, .md5 = md5 };
        const AVCodec *codec = codecs[k % 2];
        if (plain && !(dev = av_buffer_ref(master)))
            ret = AVERROR(ENOMEM);
        else if (devices)
            ret = k ? av_hwdevice_ctx_create(&dev, AV_HWDEVICE_TYPE_VULKAN, device, NULL, 0)
                    : (dev = av_buffer_ref(master)) ? 0 : AVERROR(ENOMEM);
        else if (!plain)
            ret = ctx_device(k, &dev);
        if (ret < 0 || !(wk[k].frames = av_hwframe_ctx_alloc(dev))) {
            fprintf(stderr, "%s: context %d: no device context (%s)\n", argv[0], k, av_err2str(ret));
            return 1;
        }
        AVHWFramesContext *fc = (AVHWFramesContext *)wk[k].frames->data;
        fc->format = AV_PIX_FMT_VULKAN;
        fc->sw_format = sw;
        fc->width = width;
        fc->height = height;
        AVCodecContext *enc = wk[k].enc = avcodec_alloc_context3(codec);
        if ((ret = av_hwframe_ctx_init(wk[k].frames)) < 0 || !enc) {
            fprintf(stderr, "%s: context %d: no frames context (%s)\n", argv[0], k, av_err2str(ret));
            return 1;
        }
        enc->width = width;
        enc->height = height;
        enc->pix_fmt = AV_PIX_FMT_VULKAN;
        enc->sw_pix_fmt = sw;
        enc->time_base = (AVRational){ 1, 25 };
        enc->framerate = (AVRational){ 25, 1 };
        enc->gop_size = 1;
        enc->strict_std_compliance = FF_COMPLIANCE_EXPERIMENTAL;
        enc->hw_frames_ctx = av_buffer_ref(wk[k].frames);
        enc->hw_device_ctx = dev;
        av_opt_set_int(enc->priv_data, "async_depth", depth, 0);
        if (!strcmp(codec->name, "ffv1_vulkan"))
            av_opt_set_int(enc, "level", 4, AV_OPT_SEARCH_CHILDREN);
        AVDictionary *opts = NULL;
        if (encopts && av_dict_parse_string(&opts, encopts, "=", ":", 0) < 0) {
            fprintf(stderr, "%s: -o %s: expected key=value:key=value\n", argv[0], encopts);
            return 2;
        }
        ret = avcodec_open2(enc, codec, &opts);
        const AVDictionaryEntry *left = av_dict_iterate(opts, NULL);
        if (ret >= 0 && left) {
            fprintf(stderr, "%s: %s has no option %s\n", argv[0], codec->name, left->key);
            return 2;
        }
        av_dict_free(&opts);
        if (ret < 0) {
            fprintf(stderr, "%s: context %d: cannot open %s (%s)\n", argv[0], k, codec->name, av_err2str(ret));
            return 1;
        }
    }
    double t0 = now();
    for (int k = 0; k < n; k++)
        pthread_create(&th[k], NULL, worker_main, &wk[k]);
    for (int k = 0; k < n; k++)
        pthread_join(th[k], NULL);
    double t1 = now();
    int failed = 0;
    for (int k = 0; k < n; k++) {
        if (wk[k].err < 0) {
            fprintf(stderr, "%s: context %d: %s\n", argv[0], k, av_err2str(wk[k].err));
            failed = 1;
        }
    }
    for (int i = 0; i < nframes; i++) {
        printf("%d %d ", i, size[i]);
        for (int j = 0; j < 16; j++)
            printf("%02x", md5[i][j]);
        printf("\n");
    }
    fprintf(stderr, "%s: %d frames, %d contexts of %s on compute queues", argv[0], nframes, n, encname);
    for (int k = 0; k < n; k++)
        if (devices)
            fprintf(stderr, " 0");
        else if (plain)
            fprintf(stderr, k ? "" : " 0-%d (FFmpeg's)", FFMIN(depth, (int)compute_nb) - 1);
        else
            fprintf(stderr, " %u", ctx_queue[k]);
    fprintf(stderr, " (of %u)%s, async_depth %d: %.1f fps\n", compute_nb,
            devices ? " of devices of their own" : submit_lock ? ", submissions under one lock" : "", depth,
            nframes / (t1 - t0));
    for (int k = 0; k < n; k++) {
        avcodec_free_context(&wk[k].enc);
        av_buffer_unref(&wk[k].frames);
    }
    for (int i = 0; i < nframes; i++)
        av_frame_free(&src[i]);
    free(src);
    free(size);
    free(md5);
    av_buffer_unref(&master);
    return failed;
}
