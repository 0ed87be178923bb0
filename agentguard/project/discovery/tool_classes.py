"""Finder: classes extending a framework's tool base class (``BaseTool``, ``Tool``,
``BaseToolSpec``...), run by the entry methods the catalogue names (``_run``, ``forward``),
or, for a toolkit, one tool per method its ``spec_functions`` lists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import ModuleFacts
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import (
    class_tool,
    guarded_declarations,
    model_params,
)
from agentguard.project.discovery.declarations import declarations_from_options
from agentguard.project.discovery.shared_bases import is_shared_base
from agentguard.project.discovery.toolkits import runtime_spec_functions, spec_function_names
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find_in(project: ProjectIndex, found: FoundTools, facts: ModuleFacts) -> Iterator[ToolFacts]:
    for cls in facts.classes.values():
        if is_shared_base(project, cls):
            continue
        for base in project.class_bases(cls):
            form = project.catalog.tool_forms["base_class"](base)
            if form is None:
                continue
            if not all(attr in cls.attributes for attr in form.requires_attributes):
                continue  # a class merely named like a tool base
            methods: list[str] = []
            if form.methods_from_attribute:
                attr = cls.attributes.get(form.methods_from_attribute)
                names = spec_function_names(attr)
                methods = [f"{cls.qualname}.{n}" for n in names if n]
                methods += runtime_spec_functions(project, cls, form.methods_from_attribute)
            else:
                methods = [
                    m for m in (project.find_method(cls.qualname, n) for n in form.methods) if m
                ]
            methods = [m for m in methods if m in project.functions]
            if not methods:
                continue  # another matching base may name the entry methods
            if form.methods_from_attribute:
                for method in methods:
                    fn = project.functions[method][0]
                    yield ToolFacts(
                        name=fn.name,
                        framework=form.framework,
                        form=form.form,
                        path=facts.path,
                        anchor=Location(facts.path, fn.name_span),
                        functions=[method],
                        symbol=method,
                        site=Location(facts.path, cls.name_span),
                        params=model_params(project, fn),
                    )
                break
            name_value = cls.attributes.get("name")
            name = (name_value.string() if name_value else None) or cls.name
            tool = class_tool(project, cls, facts, name, form, methods)
            tool.declarations += declarations_from_options(
                project, form.framework, tool.options, tool.site, facts
            )
            for method in methods:
                tool.declarations += guarded_declarations(
                    project, project.functions[method][0], facts
                )
            yield tool
            break
