"""Produce the pruning benchmark's outputs: real tools run on real small projects made in a scratch folder.

    .venv/bin/python bench/pruning/make_corpus.py [--only NAME ...]

Writes bench/pruning/outputs/<name>.txt (stdout and stderr merged, as an agent's shell sees them). Questions and
the hand-labelled answer lines live in bench/pruning/cases.json; outputs change a little between runs (timings,
ids), so after regenerating a case, check its labels (`bench_pruning.py --check`) and relabel what moved.
Needs: this virtualenv's pytest, node/npm (no packages are downloaded), cargo (no crates), gcc and make, git, and
Docker with the image jarvis/busybox:1 (`jarvis setup`). Docker images and containers made here are removed.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
OUTPUTS = HERE / "outputs"
SCRATCH = Path("/tmp/jarvis-prune-corpus")
PYTHON = sys.executable
CASES: dict[str, Callable[[Path], str]] = {}


def case(function: Callable[[Path], str]) -> Callable[[Path], str]:
    CASES[function.__name__] = function
    return function


def run(command: str, cwd: Path, timeout: float = 300) -> str:
    done = subprocess.run(
        ["/bin/sh", "-c", f"{command} 2>&1"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={"PATH": "/usr/local/bin:/usr/bin:/bin:/root/.cargo/bin", "HOME": "/root", "NO_COLOR": "1", "TERM": "dumb"},
    )
    return done.stdout


def write(folder: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))


# ---------------------------------------------------------------- Python projects (pytest, unittest, scripts)

SHOP = {
    "shop/__init__.py": "",
    "shop/pricing.py": """
        from dataclasses import dataclass

        TAX = {"de": 0.19, "fr": 0.20, "uk": 0.20, "us": 0.0}


        @dataclass
        class Item:
            sku: str
            price: float
            quantity: int = 1


        def subtotal(items):
            return sum(item.price * item.quantity for item in items)


        def discount(total, member):
            if member and total > 100:
                return round(total * 0.9, 2)
            return total


        def with_tax(total, country):
            return round(total * (1 + TAX[country]), 2)


        def split_bill(total, people):
            return round(total / people, 2)


        def parse_price(text):
            text = text.strip().replace("EUR", "")
            return float(text.replace(",", "."))
    """,
    "shop/inventory.py": """
        class Inventory:
            def __init__(self):
                self.stock = {}

            def add(self, sku, count):
                self.stock[sku] = self.stock.get(sku, 0) + count

            def remove(self, sku, count):
                if self.stock[sku] < count:
                    raise ValueError(f"not enough {sku}: {self.stock[sku]} < {count}")
                self.stock[sku] -= count

            def report(self):
                return {sku: n for sku, n in self.stock.items() if n}
    """,
}


def _shop(folder: Path, tests: str) -> None:
    write(folder, {**SHOP, "tests/__init__.py": "", "tests/test_shop.py": tests})


SHOP_TESTS = """
    import pytest

    from shop.inventory import Inventory
    from shop.pricing import Item, discount, parse_price, split_bill, subtotal, with_tax


    @pytest.mark.parametrize("n", range(1, 16))
    def test_subtotal_scales(n):
        assert subtotal([Item("a", 2.5, n)]) == 2.5 * n


    def test_discount_for_members():
        assert discount(200, member=True) == 170


    def test_no_discount_for_guests():
        assert discount(200, member=False) == 200


    @pytest.mark.parametrize("country", ["de", "fr", "uk", "us"])
    def test_tax_known_countries(country):
        assert with_tax(100, country) >= 100


    def test_tax_unknown_country():
        assert with_tax(100, "it") == 122


    def test_split_bill():
        assert split_bill(100, 3) == 33.33


    def test_split_bill_nobody():
        assert split_bill(100, 0) == 0


    @pytest.mark.parametrize("text,value", [("1,50", 1.5), ("2.00 EUR", 2.0), (" 3 ", 3.0), ("4 EUR ", 4.0)])
    def test_parse_price(text, value):
        assert parse_price(text) == value


    def test_inventory_remove_too_many():
        inventory = Inventory()
        inventory.add("apple", 2)
        inventory.remove("apple", 5)


    def test_inventory_report():
        inventory = Inventory()
        inventory.add("pear", 1)
        inventory.remove("pear", 1)
        assert inventory.report() == {}
"""


@case
def pytest_shop_verbose(folder: Path) -> str:
    _shop(folder, SHOP_TESTS)
    return run(f"{PYTHON} -m pytest -v -p no:cacheprovider", folder)


@case
def pytest_shop_short(folder: Path) -> str:
    _shop(folder, SHOP_TESTS)
    return run(f"{PYTHON} -m pytest -p no:cacheprovider -rA", folder)


@case
def pytest_shop_long_tb(folder: Path) -> str:
    _shop(folder, SHOP_TESTS)
    return run(f"{PYTHON} -m pytest -p no:cacheprovider --tb=long -q", folder)


@case
def pytest_collection_error(folder: Path) -> str:
    _shop(folder, SHOP_TESTS)
    write(
        folder,
        {
            "tests/test_report.py": """
                from shop.reporting import monthly_report


                def test_monthly_report():
                    assert monthly_report([]) == ""
            """
        },
    )
    return run(f"{PYTHON} -m pytest -v -p no:cacheprovider", folder)


@case
def pytest_fixture_error(folder: Path) -> str:
    _shop(folder, SHOP_TESTS)
    write(
        folder,
        {
            "tests/conftest.py": """
                import json
                import pytest


                @pytest.fixture
                def catalog(tmp_path):
                    path = tmp_path / "catalog.json"
                    path.write_text('{"apple": 1.0, "pear": 2.0,}')
                    return json.loads(path.read_text())
            """,
            "tests/test_catalog.py": """
                def test_catalog_has_apple(catalog):
                    assert "apple" in catalog


                def test_catalog_prices_positive(catalog):
                    assert all(v > 0 for v in catalog.values())
            """,
        },
    )
    return run(f"{PYTHON} -m pytest -p no:cacheprovider", folder)


@case
def pytest_warnings_and_one_failure(folder: Path) -> str:
    tests = (
        textwrap.dedent(SHOP_TESTS)
        .replace("def test_split_bill_nobody", "def _off_split_bill_nobody")
        .replace("def test_inventory_remove_too_many", "def _off_inventory_remove_too_many")
    )
    tests += textwrap.dedent("""
        import warnings


        @pytest.mark.parametrize("i", range(30))
        def test_legacy_api(i):
            warnings.warn(f"legacy pricing api {i} is deprecated", DeprecationWarning)
            assert True
    """)
    tests = tests.replace('assert with_tax(100, "it") == 122', 'assert with_tax(100, "us") == 100')
    tests = tests.replace('("4 EUR ", 4.0)', '("4 EUR ", 4.0), ("5;00", 5.0)')
    tests = tests.replace("== 170", "== 180")
    _shop(folder, tests)
    return run(f"{PYTHON} -m pytest -v -p no:cacheprovider", folder)


@case
def unittest_failures(folder: Path) -> str:
    write(
        folder,
        {
            "calc.py": """
                def mean(values):
                    return sum(values) / len(values)


                def median(values):
                    ordered = sorted(values)
                    middle = len(ordered) // 2
                    return ordered[middle]
            """,
            "test_calc.py": """
                import unittest

                from calc import mean, median


                class MeanTest(unittest.TestCase):
                    def test_mean(self):
                        self.assertEqual(mean([1, 2, 3]), 2)

                    def test_mean_empty(self):
                        self.assertEqual(mean([]), 0)


                class MedianTest(unittest.TestCase):
                    def test_odd(self):
                        self.assertEqual(median([3, 1, 2]), 2)

                    def test_even(self):
                        self.assertEqual(median([4, 1, 3, 2]), 2.5)
            """,
        },
    )
    return run(f"{PYTHON} -m unittest -v", folder)


@case
def python_service_crash(folder: Path) -> str:
    write(
        folder,
        {
            "service.py": """
                import logging
                import sqlite3

                logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
                log = logging.getLogger("orders")


                def load_orders(db):
                    return db.execute("SELECT id, customer, total FROM orders").fetchall()


                def main():
                    for step in range(40):
                        log.info("warming cache shard %d/40", step + 1)
                    db = sqlite3.connect(":memory:")
                    db.execute("CREATE TABLE order_lines (id INTEGER, total REAL)")
                    log.info("connected to database")
                    orders = load_orders(db)
                    log.info("loaded %d orders", len(orders))


                main()
            """
        },
    )
    return run(f"{PYTHON} service.py", folder)


@case
def python_service_long_log(folder: Path) -> str:
    write(
        folder,
        {
            "service.py": """
                import logging
                import random

                logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
                log = logging.getLogger("checkout")
                random.seed(7)
                STOCK = {f"sku-{n}": random.randint(0, 9) for n in range(50)}


                def reserve(order_id, sku, quantity):
                    available = STOCK[sku]
                    ratio = quantity / available
                    return ratio


                for order_id in range(4000, 5200):
                    sku = f"sku-{order_id % 53}"
                    try:
                        if order_id % 97 == 0:
                            log.warning("order %d: slow payment provider (%d ms)", order_id, 1500 + order_id % 700)
                        reserve(order_id, sku, 1 + order_id % 3)
                        log.info("order %d: reserved %s", order_id, sku)
                    except KeyError:
                        log.exception("order %d: reservation failed", order_id)
                    except ZeroDivisionError:
                        log.error("order %d: %s is out of stock", order_id, sku)
            """
        },
    )
    return run(f"{PYTHON} service.py", folder)


@case
def pytest_jarvis_unit_verbose(folder: Path) -> str:
    copy = folder / "repo"
    shutil.copytree(REPO / "jarvis", copy / "jarvis")
    shutil.copytree(REPO / "tests" / "unit", copy / "tests" / "unit")
    for name in ("__init__.py", "conftest.py", "fakes.py"):
        shutil.copy(REPO / "tests" / name, copy / "tests" / name)
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    jsonc = copy / "jarvis" / "clients" / "jsonc.py"
    jsonc.write_text(jsonc.read_text().replace('"\\r\\n"', '"\\n\\r"', 1))
    tests = (
        "tests/unit/test_jsonc.py tests/unit/test_formatting.py tests/unit/test_retry.py tests/unit/test_settings.py"
    )
    return run(f"{PYTHON} -m pytest -p no:cacheprovider -v {tests}", copy)


@case
def docker_build_long_fails(folder: Path) -> str:
    steps = "".join(f"RUN for i in $(seq 1 12); do echo step{n} unit $i compiled; done\n" for n in range(1, 9))
    write(
        folder,
        {
            "Dockerfile": (
                "FROM jarvis/busybox:1\nWORKDIR /build\n" + steps + "RUN echo linking; test -f /build/libcore.a "
                "|| (echo 'error: /build/libcore.a: No such file or directory' >&2; exit 1)\nCMD [\"true\"]\n"
            )
        },
    )
    try:
        return run("docker build --no-cache -t jarvis-prune-long:bench .", folder)
    finally:
        run("docker rmi -f jarvis-prune-long:bench", folder)


# ---------------------------------------------------------------- Node projects (npm test with node's test runner)

NODE_PACKAGE = (
    '{"name": "cart", "version": "1.0.0", "scripts": {"test": "node --test test/", "build": "node build.js"}}'
)
CART_JS = """
    function total(items) {
      return items.reduce((sum, item) => sum + item.price * item.qty, 0);
    }

    function applyCoupon(order, coupon) {
      if (coupon.kind === "percent") return { ...order, total: order.total * (1 - coupon.value / 100) };
      if (coupon.kind === "fixed") return { ...order, total: order.total - coupon.value };
      return order;
    }

    function shippingFor(address) {
      return address.country.code === "DE" ? 4.9 : 9.9;
    }

    function formatOrder(order) {
      return { id: order.id, lines: order.items.length, total: order.total.toFixed(2) };
    }

    module.exports = { total, applyCoupon, shippingFor, formatOrder };
"""


def _cart(folder: Path, tests: str) -> None:
    write(folder, {"package.json": NODE_PACKAGE, "src/cart.js": CART_JS, "test/cart.test.js": tests})


CART_TESTS = """
    const test = require("node:test");
    const assert = require("node:assert");
    const { total, applyCoupon, shippingFor, formatOrder } = require("../src/cart");

    for (let n = 1; n <= 12; n++) {
      test(`total of ${n} items`, () => {
        assert.strictEqual(total([{ price: 2, qty: n }]), 2 * n);
      });
    }

    test("percent coupon", () => {
      assert.strictEqual(applyCoupon({ total: 50 }, { kind: "percent", value: 10 }).total, 45);
    });

    test("fixed coupon never below zero", () => {
      assert.strictEqual(applyCoupon({ total: 5 }, { kind: "fixed", value: 10 }).total, 0);
    });

    test("shipping to Germany", () => {
      assert.strictEqual(shippingFor({ country: { code: "DE" } }), 4.9);
    });

    test("shipping without country", () => {
      assert.strictEqual(shippingFor({ city: "Paris" }), 9.9);
    });

    test("format order", () => {
      assert.deepStrictEqual(formatOrder({ id: 7, items: [1, 2], total: 3 }), { id: 7, lines: 2, total: 3 });
    });
"""


@case
def npm_test_failures(folder: Path) -> str:
    _cart(folder, CART_TESTS)
    return run("npm test", folder)


@case
def npm_test_missing_module(folder: Path) -> str:
    _cart(folder, CART_TESTS.replace('require("../src/cart")', 'require("../src/carts")'))
    return run("npm test", folder)


@case
def npm_build_syntax_error(folder: Path) -> str:
    _cart(folder, CART_TESTS)
    write(
        folder,
        {
            "build.js": """
                const fs = require("node:fs");
                const files = ["src/cart.js", "src/tax.js"];
                for (const file of files) {
                  console.log(`bundling ${file}`);
                  require("./" + file);
                }
                fs.writeFileSync("dist.txt", "ok");
            """,
            "src/tax.js": """
                const RATES = { DE: 0.19, FR: 0.2 };
                function taxFor(country) {
                  return RATES[country] ?? 0
                }
                module.exports = { taxFor, rates: RATES, };
                export default taxFor;
            """,
        },
    )
    return run("npm run build", folder)


@case
def npm_test_many_passing_one_failing(folder: Path) -> str:
    tests = CART_TESTS.replace("n <= 12", "n <= 60")
    tests = tests.replace("value: 10 }).total, 0", "value: 10 }).total, -5")
    tests = tests.replace('shippingFor({ city: "Paris" }), 9.9', 'shippingFor({ country: { code: "FR" } }), 9.9')
    tests = tests.replace("total: 3 }", 'total: "3.00" }').replace("lines: 2,", "lines: 3,")
    _cart(folder, tests)
    return run("npm test", folder)


# ---------------------------------------------------------------- containers and compose (jarvis/busybox:1)


def _docker_case(folder: Path, tag: str, dockerfile: str, files: dict[str, str], run_args: str = "") -> str:
    write(folder, {"Dockerfile": dockerfile, **files})
    name = f"jarvis-prune-{tag}"
    try:
        build = run(f"docker build -q -t {name}:bench .", folder)
        if "sha256:" not in build:
            return build
        run(f"docker rm -f {name}", folder)
        run(f"docker run --name {name} {run_args} {name}:bench", folder, timeout=120)
        return run(f"docker logs {name}", folder)
    finally:
        run(f"docker rm -f {name}; docker rmi -f {name}:bench", folder)


@case
def container_missing_config(folder: Path) -> str:
    script = """
        #!/bin/sh
        echo "api starting, version 2.4.1"
        i=1
        while [ $i -le 25 ]; do echo "loading plugin plugin-$i ok"; i=$((i+1)); done
        echo "reading configuration from /etc/api/config.yaml"
        if [ ! -f /etc/api/config.yaml ]; then
          echo "FATAL: configuration file /etc/api/config.yaml not found (mount it or set API_CONFIG)" >&2
          echo "shutting down" >&2
          exit 78
        fi
    """
    return _docker_case(
        folder,
        "config",
        'FROM jarvis/busybox:1\nCOPY start.sh /start.sh\nCMD ["sh", "/start.sh"]\n',
        {"start.sh": script},
    )


@case
def container_db_connection_refused(folder: Path) -> str:
    script = """
        #!/bin/sh
        echo "worker 1.9 booting"
        echo "queue=emails concurrency=4"
        n=1
        while [ $n -le 12 ]; do
          echo "attempt $n: connecting to postgres at db.internal:5432"
          if nc -w 1 127.0.0.1 5432 </dev/null 2>/dev/null; then echo connected; exit 0; fi
          echo "attempt $n: connection refused (127.0.0.1:5432), retrying in 0s" >&2
          n=$((n+1))
        done
        echo "giving up after 12 attempts: database unreachable" >&2
        exit 1
    """
    return _docker_case(
        folder,
        "db",
        'FROM jarvis/busybox:1\nCOPY worker.sh /worker.sh\nCMD ["sh", "/worker.sh"]\n',
        {"worker.sh": script},
    )


@case
def container_oom_like_kill(folder: Path) -> str:
    script = """
        #!/bin/sh
        echo "indexer started"
        i=0
        while [ $i -lt 60 ]; do
          echo "indexed batch $i: 500 documents, heap ${i}0 MB"
          i=$((i+1))
        done
        echo "WARN heap above 550 MB, flushing caches"
        echo "ERROR batch 61 failed: cannot allocate 268435456 bytes for segment buffer" >&2
        kill -9 $$
    """
    return _docker_case(
        folder, "oom", 'FROM jarvis/busybox:1\nCOPY idx.sh /idx.sh\nCMD ["sh", "/idx.sh"]\n', {"idx.sh": script}
    )


COMPOSE_BUILD = """
    services:
      web:
        build: ./web
      worker:
        build: ./worker
"""


@case
def compose_build_run_fails(folder: Path) -> str:
    write(
        folder,
        {
            "compose.yaml": COMPOSE_BUILD,
            "web/Dockerfile": "FROM jarvis/busybox:1\nRUN echo building web && mkdir -p /srv/web\nCOPY index.html /srv/web/\n",
            "web/index.html": "<h1>hi</h1>\n",
            "worker/Dockerfile": (
                "FROM jarvis/busybox:1\nRUN echo preparing worker\nRUN mkdir -p /app && echo 'job' > /app/job.txt\n"
                "RUN sh -c 'echo compiling worker; for f in a b c; do echo compiling $f.o; done; "
                'echo "ld: cannot find -lqueue" >&2; exit 2\'\n'
            ),
        },
    )
    try:
        return run("docker compose -p jarvisprunebuild build --progress plain", folder)
    finally:
        run("docker compose -p jarvisprunebuild down --rmi all", folder)


@case
def compose_build_copy_missing(folder: Path) -> str:
    write(
        folder,
        {
            "compose.yaml": COMPOSE_BUILD,
            "web/Dockerfile": "FROM jarvis/busybox:1\nRUN echo building web\nCOPY index.html nginx.conf /srv/web/\n",
            "web/index.html": "<h1>hi</h1>\n",
            "worker/Dockerfile": "FROM jarvis/busybox:1\nRUN echo worker ok\n",
        },
    )
    try:
        return run("docker compose -p jarvisprunecopy build --progress plain", folder)
    finally:
        run("docker compose -p jarvisprunecopy down --rmi all", folder)


@case
def compose_config_invalid(folder: Path) -> str:
    write(
        folder,
        {
            "compose.yaml": """
                services:
                  api:
                    image: jarvis/busybox:1
                    command: ["sleep", "1"]
                    ports:
                      - "8080:80"
                    environment:
                      MODE: prod
                    depends_on:
                      - database
                  cache:
                    image: jarvis/busybox:1
                    restart: unless-stopped
                    healthcheck:
                      test: ["CMD", "true"]
                      interval: 5s
            """
        },
    )
    return run("docker compose -p jarvisprunecfg config", folder)


@case
def compose_up_one_service_exits(folder: Path) -> str:
    write(
        folder,
        {
            "compose.yaml": """
                services:
                  api:
                    image: jarvis/busybox:1
                    command: ["sh", "-c", "for i in 1 2 3 4 5 6 7 8; do echo api request $$i served; done; sleep 2"]
                  migrate:
                    image: jarvis/busybox:1
                    command: ["sh", "-c", "echo applying 0001_init; echo applying 0002_users; echo 'migration 0003_orders failed: column total already exists' >&2; exit 4"]
                  cache:
                    image: jarvis/busybox:1
                    command: ["sh", "-c", "for i in 1 2 3 4 5 6; do echo cache warm $$i; done; sleep 2"]
            """
        },
    )
    try:
        run("docker compose -p jarvisprunelogs up -d", folder)
        run("sleep 4", folder)
        return run(
            "docker compose -p jarvisprunelogs logs --no-color && docker compose -p jarvisprunelogs ps -a", folder
        )
    finally:
        run("docker compose -p jarvisprunelogs down", folder)


# ---------------------------------------------------------------- git and grep on this repository


@case
def git_diff_atomic(folder: Path) -> str:
    return run("git diff 2fda1e0 339f768", REPO)


@case
def git_log_stat(folder: Path) -> str:
    return run("git log --stat -n 12 339f768", REPO)


@case
def git_show_tests_commit(folder: Path) -> str:
    return run("git show --stat --patch 9f44be1 -- tests/unit/test_config_tool.py | head -400", REPO)


@case
def git_diff_settings_history(folder: Path) -> str:
    return run("git log -p -n 6 339f768 -- jarvis/settings.py", REPO)


@case
def grep_defs(folder: Path) -> str:
    return run("git grep -n 'def ' 339f768 -- jarvis/store jarvis/clients", REPO)


@case
def grep_env_names(folder: Path) -> str:
    return run("git grep -n 'JARVIS_' 339f768 -- jarvis README.md", REPO)


@case
def grep_raise(folder: Path) -> str:
    return run("git grep -n 'raise ' 339f768 -- jarvis adapters", REPO)


@case
def grep_todo_timeouts(folder: Path) -> str:
    return run("git grep -n -i 'timeout' 339f768 -- jarvis adapters tests/e2e", REPO)


# ---------------------------------------------------------------- Rust, C, linters


CRATE = {
    "Cargo.toml": '[package]\nname = "ring"\nversion = "0.1.0"\nedition = "2021"\n',
    "src/lib.rs": """
        pub struct Ring { items: Vec<u32>, cap: usize }

        impl Ring {
            pub fn new(cap: usize) -> Self { Ring { items: Vec::new(), cap } }
            pub fn push(&mut self, x: u32) {
                if self.items.len() == self.cap { self.items.remove(0); }
                self.items.push(x);
            }
            pub fn last(&self) -> u32 { self.items[self.items.len() - 1] }
            pub fn average(&self) -> u32 { self.items.iter().sum::<u32>() / self.items.len() as u32 }
        }

        #[cfg(test)]
        mod tests {
            use super::*;
            #[test] fn keeps_capacity() { let mut r = Ring::new(2); r.push(1); r.push(2); r.push(3); assert_eq!(r.items, vec![2, 3]); }
            #[test] fn last_item() { let mut r = Ring::new(3); r.push(7); assert_eq!(r.last(), 7); }
            #[test] fn last_of_empty() { let r = Ring::new(3); assert_eq!(r.last(), 0); }
            #[test] fn average_rounds_down() { let mut r = Ring::new(3); r.push(1); r.push(2); assert_eq!(r.average(), 2); }
            #[test] fn average_two() { let mut r = Ring::new(3); r.push(2); r.push(4); assert_eq!(r.average(), 3); }
        }
    """,
}


@case
def cargo_test_panics(folder: Path) -> str:
    write(folder, CRATE)
    return run("cargo test --offline --color never", folder)


@case
def cargo_build_type_error(folder: Path) -> str:
    broken = dict(CRATE)
    broken["src/lib.rs"] = CRATE["src/lib.rs"].replace(
        "pub fn last(&self) -> u32 { self.items[self.items.len() - 1] }",
        "pub fn last(&self) -> u32 { self.items.last() }",
    )
    write(folder, broken)
    return run("cargo build --offline --color never", folder)


@case
def make_gcc_error(folder: Path) -> str:
    write(
        folder,
        {
            "Makefile": "CFLAGS=-Wall -Wextra -O2\nall: app\napp: main.o util.o parse.o\n\t$(CC) -o app $^\n",
            "util.c": "#include <stdio.h>\nint clamp(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }\n",
            "parse.c": (
                "#include <stdlib.h>\n#include <string.h>\nint parse_port(const char *s) {\n  char *end;\n"
                "  long v = strtol(s, &end, 10);\n  int unused;\n  if (*end) return -1;\n  return (int)v;\n}\n"
            ),
            "main.c": (
                "#include <stdio.h>\nint parse_port(const char *s);\nint clamp(int v, int lo, int hi);\n"
                "int main(int argc, char **argv) {\n  int port = parse_port(argv[1]);\n"
                '  printf("port %d\\n", clamp(port, 1, 65535))\n  return 0;\n}\n'
            ),
        },
    )
    return run("make", folder)


@case
def ruff_lint(folder: Path) -> str:
    write(
        folder,
        {
            "app/__init__.py": "",
            "app/views.py": """
                import os
                import sys
                import json
                from typing import List, Dict


                def handler(request, context):
                    data = json.loads(request)
                    if data == None:
                        return {}
                    l = [x for x in data]
                    return {"count": len(l)}


                def unused(a, b):
                    try:
                        return a / b
                    except:
                        pass
            """,
            "app/models.py": """
                import datetime
                from dataclasses import dataclass


                @dataclass
                class User:
                    name: str
                    created: datetime.datetime = datetime.datetime.now()

                    def greet(self):
                        return "hi %s" % self.name
            """,
        },
    )
    ruff = Path(PYTHON).with_name("ruff")
    return run(f"{ruff} check --no-cache --select E,F,W,B,UP,E711,E722,E741 --output-format full app", folder)


@case
def jarvis_settings_pytest(folder: Path) -> str:
    # This repository's own tests, with one real setting broken in a copy.
    copy = folder / "repo"
    shutil.copytree(REPO / "jarvis", copy / "jarvis")
    shutil.copytree(REPO / "tests" / "unit", copy / "tests" / "unit")
    for name in ("__init__.py", "conftest.py", "fakes.py"):
        shutil.copy(REPO / "tests" / name, copy / "tests" / name)
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    settings = copy / "jarvis" / "settings.py"
    settings.write_text(settings.read_text().replace('profile_prefix: str = "mcpm-"', 'profile_prefix: str = "mcp-"'))
    return run(f"{PYTHON} -m pytest -p no:cacheprovider -q tests/unit/test_settings.py tests/unit/test_tools.py", copy)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="case names (default: all)")
    args = parser.parse_args()
    OUTPUTS.mkdir(exist_ok=True)
    for number, (name, produce) in enumerate(CASES.items()):
        if args.only and name not in args.only:
            continue
        # A neutral folder name: the case's name in paths would hand the pruner the question's words.
        folder = SCRATCH / f"project{number:02d}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        text = produce(folder)
        (OUTPUTS / f"{name}.txt").write_text(text)
        print(f"{name}: {len(text.splitlines())} lines")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
