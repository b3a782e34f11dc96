# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# flamegraph.mk: test_flamegraph writes a fixture graph for tests/svg/check.sh (a browser check).
$(OUTPUT)/tests/unit/test_flamegraph: private override CFLAGS += \
	-DFLAMEGRAPH_UNIT_SVG='"$(abspath $(OUTPUT))/tests/flamegraph-unit.svg"'
