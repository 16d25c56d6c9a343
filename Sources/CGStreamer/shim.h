// GStreamer for Swift: the headers, plus small static-inline wrappers for what Swift cannot call
// directly (macros, casts between GObject types, variadic functions). No logic lives here.
#ifndef FACERELAY_CGSTREAMER_SHIM_H
#define FACERELAY_CGSTREAMER_SHIM_H

#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/pbutils/pbutils.h>
#include <gio/gio.h>
#include <sys/prctl.h>
#include <malloc.h>
#include <sys/eventfd.h>
#include <semaphore.h>
#include <unistd.h>

#include "shim_elements.h"
#include "shim_signals.h"
#include "shim_pads.h"
#include "shim_buffers.h"
#include "shim_app.h"
#include "shim_bus.h"
#include "shim_thumbnails.h"

#endif
