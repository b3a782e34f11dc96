# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# python_lines.mk: fixtures of test_python_lines, one file a CPython version: what
# tests/fixtures/python_linetable.py prints under that interpreter (its code objects'
# co_linetable and co_lines()). Only the interpreters present get a rule: Debian's python3 (the
# versioned binary /usr/bin/python3 links to: 3.11 on Debian 12, 3.13 on Debian 13) must be
# (test_python_lines fails without it), pyenv's others may be (the test skips those absent when
# it runs). One present that fails fails the build.
PY_LINES_PYENV ?= /root/.pyenv
PY_LINES_DEBIAN := $(realpath /usr/bin/python3)
PY_LINES_DEBIAN_V := $(patsubst python%,%,$(notdir $(PY_LINES_DEBIAN)))
ifneq ($(filter 3.10 3.11 3.12 3.13,$(PY_LINES_DEBIAN_V)),)
PY_LINES_$(PY_LINES_DEBIAN_V) ?= $(PY_LINES_DEBIAN)
endif
PY_LINES_3.10 ?= $(PY_LINES_PYENV)/versions/3.10.13/bin/python3.10
PY_LINES_3.11 ?= $(PY_LINES_PYENV)/versions/3.11.7/bin/python3.11
PY_LINES_3.12 ?= $(PY_LINES_PYENV)/versions/3.12.1/bin/python3.12
PY_LINES_3.13 ?= $(PY_LINES_PYENV)/versions/3.13.0/bin/python3.13
# 3.14 and 3.15: those of a container root (e.g. tools/fresh-root.sh's sid root with them), run
# there as a container's (chroot in a mount namespace of their own, the fixture script bound on
# its /mnt); empty or without them: not tested.
PY_LINES_ROOT ?=
PY_LINES_ROOT_VERSIONS := 3.14 3.15
$(foreach v,$(PY_LINES_ROOT_VERSIONS),$(if $(PY_LINES_ROOT),\
	$(eval PY_LINES_$(v) ?= $(PY_LINES_ROOT)/usr/bin/python$(v))))
PY_LINES_VERSIONS := 3.10 3.11 3.12 3.13 $(PY_LINES_ROOT_VERSIONS)
PY_LINES_PRESENT := $(foreach v,$(PY_LINES_VERSIONS),$(if $(wildcard $(PY_LINES_$(v))),$(v)))
PY_LINES_FIX := $(OUTPUT)/tests/fixtures/python_linetable
PY_LINES_GEN := tests/fixtures/python_linetable.py
# How 3.$(1)'s interpreter runs the fixture script.
py_lines_run = $(if $(filter $(1),$(PY_LINES_ROOT_VERSIONS)),\
	unshare --mount --pid --fork sh -c 'mount --bind "$(abspath $(dir $(PY_LINES_GEN)))" \
	"$(PY_LINES_ROOT)/mnt" && exec chroot "$(PY_LINES_ROOT)" python$(1) \
	/mnt/$(notdir $(PY_LINES_GEN))',\
	'$(PY_LINES_$(1))' $(PY_LINES_GEN))

define PY_LINES_RULE
$(PY_LINES_FIX)/$(1).txt: $(PY_LINES_GEN) tests/unit/python_lines.mk $(PY_LINES_$(1))
	$$(call msg,GEN,$$@)
	$(Q)mkdir -p $$(@D)
	$(Q)$(call py_lines_run,$(1)) >$$@.tmp && mv $$@.tmp $$@
endef
$(foreach v,$(PY_LINES_PRESENT),$(eval $(call PY_LINES_RULE,$(v))))

# private: the library objects built for this binary must not get the test-only macros.
$(OUTPUT)/tests/unit/test_python_lines: $(PY_LINES_PRESENT:%=$(PY_LINES_FIX)/%.txt)
$(OUTPUT)/tests/unit/test_python_lines: private override CFLAGS += \
	-DPY_LINES_FIXTURES='"$(abspath $(PY_LINES_FIX))"' \
	$(foreach v,$(PY_LINES_VERSIONS),-DPY_LINES_$(subst .,_,$(v))='"$(PY_LINES_$(v))"')
