"""A small C project for a real `make -jN` (tests/e2e/test_real_make.py,
bench/realwin.py): UNITS translation units of generated code, each a
fraction of a second of cc1, a main.c, and a Makefile linking them."""
import os

UNITS = 6
FUNCS = 100


def write(d, units=UNITS, funcs=FUNCS):
    for i in range(units):
        with open(os.path.join(d, "u%d.c" % i), "w") as f:
            for k in range(funcs):
                f.write("int f%d_%d(int *v, int n)\n{\n\tint s = %d;\n"
                        "\tfor (int i = 0; i < n; i++) {\n"
                        "\t\ts += v[i] * %d ^ (s >> %d);\n"
                        "\t\tif (s & %d)\n\t\t\ts -= v[(i * %d) %% n];\n\t}\n"
                        "\treturn s;\n}\n" % (i, k, k, k + 3, k % 7 + 1, k + 1, k + 5))
    with open(os.path.join(d, "main.c"), "w") as f:
        f.write("int main(void)\n{\n\treturn 0;\n}\n")
    objs = " ".join(["main.o"] + ["u%d.o" % i for i in range(units)])
    with open(os.path.join(d, "Makefile"), "w") as f:
        f.write("prog: %s\n\t$(CC) -o $@ %s\n%%.o: %%.c\n\t$(CC) -O2 -c -o $@ $<\n" %
                (objs, objs))
