# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# labels.mk: container and pod labels (issue 6): test_kube's mock API server, and cgroup_read for
# tests/integration/run-labels.sh (included by tests/tests.mk).

# private: the library objects built for this binary must not get the test-only macro.
$(OUTPUT)/tests/unit/test_kube: tests/mock/kube_api.py
$(OUTPUT)/tests/unit/test_kube: private override CFLAGS += \
	-DKUBE_MOCK='"$(abspath tests/mock/kube_api.py)"'

# cgroup_read PID: test_cgroup's "--read PID" mode (cgroup__read()'s fields), next to the other
# test programs, where the integration tests look.
TEST_TARGETS += $(TARGETS_DIR)/cgroup_read
$(TARGETS_DIR)/cgroup_read: $(OUTPUT)/tests/unit/test_cgroup | $(TARGETS_DIR)
	$(call msg,CP,$@)
	$(Q)cp $< $@.tmp && mv $@.tmp $@
