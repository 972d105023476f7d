"""The named queries and views of `audit/query/sql/` in Spark SQL, translated from their DuckDB source by
SQLGlot: the `.sql` files stay the one copy of every query.

The translation is mechanical. SQLGlot turns the dialect (`//`, QUALIFY, JSON extraction …); on top
of it, rewrites of the parsed tree do what it does not: a table macro call (`standings(t, n)`, which
Spark lacks) becomes the macro's body as a subquery with the call's arguments put in for its
parameters; a parameter (`$tournament`) the literal value given (NULL when not given); an ordered
`list(x ORDER BY y)` a sorted list of structs; `format('{}')` Spark's `format_string('%s')`; a
computed 1-based list index `ELEMENT_AT`; a division a DOUBLE's, as in DuckDB; a JSON extraction of several paths the list of single ones.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlglot
from sqlglot import exp

from audit.query.db import QUERIES, VIEWS, NamedQuery

READ, WRITE = "duckdb", "spark"


class TranslationError(ValueError):
    """A query of `audit/query/sql/` has no Spark SQL form."""


@dataclass(frozen=True)
class Relation:
    """A view or table of `audit/query/sql/views/` in Spark SQL: its name, whether Spark should build it
    once and keep it (a table of DuckDB's, or a view that joins) or read it through, and its SELECT."""

    name: str
    kept: bool
    select: str


@dataclass(frozen=True)
class Steps:
    """A query in Spark SQL as steps: each CTE of its top-level WITH (named after the query) to be
    built and kept in order, then the final SELECT that reads them. Spark inlines a CTE at every
    reference, and the standings chain references its CTEs so often that the inlined plan of one
    query held a thousand joins; built one by one, each is computed once."""

    ctes: list[tuple[str, str]]
    select: str


def spark_relations() -> list[Relation]:
    """Returns every view and table of `audit/query/sql/views/` in load order, macros left out (their
    calls are expanded where they are made).

    :raises TranslationError: when one does not translate.
    """
    out = []
    for view in VIEWS.values():
        if view.kind in ("view", "table"):
            body = _body(view)
            kept = view.kind == "table" or body.find(exp.Join) is not None or bool(_ctes(body))
            out.append(Relation(view.name, kept, _spark(body, {})))
    return out


def spark_query(name: str, params: dict[str, Any]) -> Steps:
    """Returns a named query of `audit/query/sql/` in Spark SQL, as steps, with its parameters as literals.

    :raises TranslationError: when it does not translate.
    """
    query = QUERIES[name]
    return _steps(_spark(_parsed(query), {p: params.get(p) for p in query.params}), name)


def _steps(sql: str, name: str) -> Steps:
    """Splits a Spark query's top-level CTEs (which the generator has gathered there, those of
    expanded macros too) into steps named `<query>__<cte>`."""
    tree = _prefixed_ctes(sqlglot.parse_one(sql, read=WRITE), name)
    ctes = [(cte.alias, cte.this.sql(WRITE)) for cte in _ctes(tree)]
    tree.set("with_", None)
    return Steps(ctes, tree.sql(WRITE))


def spark_sql(sql: str) -> str:
    """Returns a user's DuckDB SELECT in Spark SQL (macro calls expanded, no parameters).

    :raises TranslationError: when it does not parse or translate.
    """
    try:
        tree = sqlglot.parse_one(sql, read=READ)
    except sqlglot.errors.ParseError as exc:
        raise TranslationError(f"SQL does not parse: {exc}") from None
    return _spark(tree, {})


def _spark(tree: exp.Expr, params: dict[str, Any]) -> str:
    tree = _expand_macros(tree.copy())
    tree = tree.transform(lambda node: _rewrite(node, params))
    try:
        return tree.sql(dialect=WRITE, unsupported_level=sqlglot.ErrorLevel.RAISE)
    except sqlglot.errors.UnsupportedError as exc:
        raise TranslationError(str(exc)) from None


def _parsed(query: NamedQuery) -> exp.Expr:
    try:
        statements = [s for s in sqlglot.parse(query.sql, read=READ) if s is not None and not isinstance(s, exp.Semicolon)]
    except sqlglot.errors.ParseError as exc:
        raise TranslationError(f"{query.name}: {exc}") from None
    if len(statements) != 1:
        raise TranslationError(f"{query.name}: {len(statements)} statements, not one")
    return statements[0]


def _body(view: NamedQuery) -> exp.Expr:
    """Returns the SELECT of a `CREATE VIEW|TABLE|MACRO … AS` file."""
    created = _parsed(view)
    if not isinstance(created, exp.Create) or created.expression is None:
        raise TranslationError(f"{view.name}: not a CREATE … AS SELECT")
    return created.expression


_MACROS = {v.name: v for v in VIEWS.values() if v.kind == "macro"}


def _expand_macros(tree: exp.Expr) -> exp.Expr:
    """Replaces each call of a table macro in FROM or JOIN by the macro's body, its parameters
    replaced by the call's arguments, as a subquery named after the macro (or the call's alias)."""
    for table in list(tree.find_all(exp.Table)):
        call = table.this
        if isinstance(call, exp.Anonymous) and call.name in _MACROS:
            body = _expand_macros(_macro_body(call.name, call.expressions))
            table.replace(exp.Subquery(this=body, alias=exp.TableAlias(this=exp.to_identifier(table.alias_or_name or call.name))))
    return tree


def _macro_body(name: str, arguments: list[exp.Expr]) -> exp.Expr:
    created = _parsed(_MACROS[name])
    parameters = [p.name for p in created.this.expressions]
    if len(parameters) != len(arguments):
        raise TranslationError(f"macro {name} takes {len(parameters)} arguments, called with {len(arguments)}")
    values = dict(zip(parameters, arguments))

    def put(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in values:
            return values[node.name].copy()
        return node

    return _prefixed_ctes(created.expression.transform(put), name)


def _prefixed_ctes(body: exp.Expr, prefix: str) -> exp.Expr:
    """Renames a macro body's CTEs after the macro: Spark's SQL keeps a subquery's CTEs beside the
    caller's, and the caller may have one of the same name (`swiss` reads `swiss_matches` as `matches`)."""
    names = {cte.alias for cte in _ctes(body)}
    for cte in _ctes(body):
        cte.set("alias", exp.TableAlias(this=exp.to_identifier(f"{prefix}__{cte.alias}")))
    for table in body.find_all(exp.Table):
        if not table.db and table.name in names:
            alias = table.alias or table.name
            table.set("this", exp.to_identifier(f"{prefix}__{table.name}"))
            table.set("alias", exp.TableAlias(this=exp.to_identifier(alias)))
    return body


def _rewrite(node: exp.Expr, params: dict[str, Any]) -> exp.Expr:
    rewrite = lambda tree: tree.copy().transform(lambda n: _rewrite(n, params))  # noqa: E731 - the parts of a node rewritten first
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.ArrayAgg) and _is_ordered_list(node.this):
        return _sorted_list(node.this, node.expression, rewrite)
    if isinstance(node, exp.ArrayAgg) and _is_ordered_list(node):
        return _sorted_list(node, None, rewrite)
    if isinstance(node, exp.Avg | exp.Sum) and isinstance(node.this, exp.Order):
        # DuckDB sums in the order given so that float noise repeats run to run; Spark has no
        # ordered aggregates, and every such average is rounded before it is compared or shown
        return node.__class__(this=rewrite(node.this.this))
    if isinstance(node, exp.IgnoreNulls) and isinstance(node.this, exp.AnyValue):
        node = node.this
    if isinstance(node, exp.AnyValue):
        return exp.Anonymous(this="ANY_VALUE", expressions=[rewrite(node.this), exp.true()])  # DuckDB's skips NULLs
    if isinstance(node, exp.Format):
        return _format_string(node, rewrite)
    if isinstance(node, exp.Div):
        # DuckDB's `/` gives a DOUBLE whatever it divides; Spark's gives a DECIMAL(38, 18) of decimals (100.0 * mp / top)
        return exp.Div(this=exp.cast(rewrite(node.this), "DOUBLE"), expression=rewrite(node.expression))
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1 and not isinstance(node.expressions[0], exp.Literal):
        # SQLGlot shifts a literal index to Spark's 0-based one but leaves a computed index as it is;
        # ELEMENT_AT counts from 1, as DuckDB does
        return exp.Anonymous(this="ELEMENT_AT", expressions=[rewrite(node.this), rewrite(node.expressions[0])])
    if isinstance(node, exp.Placeholder) and node.name:
        if node.name not in params:
            raise TranslationError(f"parameter ${node.name} has no value")
        return _literal(params[node.name])
    if isinstance(node, exp.JSONExtract) and isinstance(node.expression, exp.Array):
        # DuckDB reads several paths of one document in one call; Spark takes them one by one
        return exp.Array(expressions=[exp.JSONExtract(this=rewrite(node.this), expression=p.copy()) for p in node.expression.expressions])
    return node


def _literal(value: Any) -> exp.Expr:
    if value is None:
        return exp.Null()
    if isinstance(value, bool):
        return exp.Boolean(this=value)
    if isinstance(value, int | float):
        return exp.Literal.number(value)
    return exp.Literal.string(str(value))


def _ctes(tree: exp.Expr) -> list[exp.CTE]:
    """Returns the CTEs of a query's top-level WITH (none for anything else)."""
    return list(tree.ctes) if isinstance(tree, exp.Query) else []


def _is_ordered_list(node: exp.Expr) -> bool:
    return isinstance(node, exp.ArrayAgg) and isinstance(node.this, exp.Order)


def _sorted_list(agg: exp.ArrayAgg, where: exp.Expr | None, rewrite: Any) -> exp.Expr:
    """Returns `list(x ORDER BY k…) [FILTER (WHERE …)]` in Spark, which has no ordered aggregate:
    the list of (keys, x) structs sorted by a comparator of the keys (DuckDB's null placement
    kept), then x taken out of each."""
    order: exp.Order = agg.this
    value, keys = order.this, order.expressions
    filtered = f" FILTER (WHERE {rewrite(where.this).sql(WRITE)})" if where is not None else ""
    if isinstance(value, exp.Distinct):
        if len(keys) != 1 or keys[0].args.get("desc") or keys[0].this != value.expressions[0]:
            raise TranslationError(f"{agg.sql(READ)}: a DISTINCT list is only translated sorted by its own values")
        return sqlglot.parse_one(f"ARRAY_SORT(COLLECT_SET({rewrite(value.expressions[0]).sql(WRITE)}){filtered})", read=WRITE)
    fields = ", ".join([f"'v', {rewrite(value).sql(WRITE)}", *(f"'k{i}', {rewrite(k.this).sql(WRITE)}" for i, k in enumerate(keys))])
    compare = "0"
    for i, key in reversed(list(enumerate(keys))):
        a, b, low = f"a.k{i}", f"b.k{i}", "1" if key.args.get("desc") else "-1"
        high = "-1" if low == "1" else "1"
        null_first = "-1" if key.args.get("nulls_first") else "1"
        null_last = "1" if null_first == "-1" else "-1"
        compare = (f"CASE WHEN {a} IS NULL AND {b} IS NULL THEN {compare} WHEN {a} IS NULL THEN {null_first} "
                   f"WHEN {b} IS NULL THEN {null_last} WHEN {a} < {b} THEN {low} WHEN {a} > {b} THEN {high} ELSE {compare} END")
    return sqlglot.parse_one(f"TRANSFORM(ARRAY_SORT(COLLECT_LIST(NAMED_STRUCT({fields})){filtered}, (a, b) -> {compare}), s -> s.v)",
                             read=WRITE)


def _format_string(node: exp.Format, rewrite: Any) -> exp.Expr:
    """Returns DuckDB's `format('{} …', …)` as Spark's `format_string('%s …', …)`."""
    template = node.this
    if not isinstance(template, exp.Literal) or not template.is_string or "%" in template.name:
        raise TranslationError(f"{node.sql(READ)}: only a literal format of plain {{}} fields translates")
    text = template.name.replace("{}", "%s")
    if "{" in text:
        raise TranslationError(f"{node.sql(READ)}: only plain {{}} fields translate")
    values = [rewrite(e) for e in node.expressions]
    # every value as text first (Spark's %s of a list would print the object), and NULL when any value is, as DuckDB's
    formatted = exp.Anonymous(this="FORMAT_STRING", expressions=[exp.Literal.string(text), *(exp.cast(v, "STRING") for v in values)])
    if not values:
        return formatted
    return exp.Case(ifs=[exp.If(this=exp.or_(*(exp.Is(this=v.copy(), expression=exp.Null()) for v in values)), true=exp.Null())],
                    default=formatted)
