# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# perf_map.mk: the perf map unit test reads its fixtures (perf_map_*.map) from tests/fixtures.
$(OUTPUT)/tests/unit/test_perf_map: private override CFLAGS += \
	-DFIXTURES_DIR='"$(abspath tests/fixtures)"'
