#pragma once
// The nexp SDK: everything a plugin includes.
#include "nexp/config.hpp"
#include "nexp/dataset.hpp"
#include "nexp/device.hpp"
#include "nexp/error.hpp"
#include "nexp/method.hpp"
#include "nexp/metric.hpp"
#include "nexp/plugin.hpp"
#include "nexp/random.hpp"
#include "nexp/run_context.hpp"
#include "nexp/stats.hpp"
#include "nexp/table.hpp"
#include "nexp/text.hpp"
