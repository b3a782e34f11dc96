# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# export.mk: the exporter and metrics tests run tests/mock/pyroscope.py (python3) on loopback.
$(OUTPUT)/tests/unit/test_export_pyroscope: tests/mock/pyroscope.py
$(OUTPUT)/tests/unit/test_export_pyroscope: private override CFLAGS += \
	-DMOCK_PYROSCOPE='"$(abspath tests/mock/pyroscope.py)"'
