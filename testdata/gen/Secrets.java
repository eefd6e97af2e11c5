// Plants known secret values in the heap, for the privacy tests.
// Build and dump with: scripts/gendump.sh Secrets OUT.hprof
// Every value is listed (with its exact bytes as they appear in the HPROF file) in
// testdata/gen/secrets.txt: keep both in sync.
// Prints READY once the heap is built, then sleeps until killed.
package com.example.secrets;

public class Secrets {
    /** The static that keeps the vault reachable. */
    static Vault VAULT;

    public static void main(String[] args) throws Exception {
        VAULT = new Vault();
        VAULT.check();
        System.out.println("READY");
        System.out.flush();
        while (VAULT != null) {
            Thread.sleep(60_000);
        }
    }
}

class Vault {
    // Not final, so it is an ordinary static field stored in the class mirror.
    static long staticSecretLong = 0x7A6B5C4D3E2F1001L;

    // A string literal (interned, LATIN1 coder).
    String secretString = "SECRET-STRING-7f3a9c";
    // Built at run time, so it is a separate, non-interned String (LATIN1 coder).
    String secretString2 = new StringBuilder("s3cr3t-").append("Str1ng-").append("Qx9").toString();
    // Has characters outside Latin-1, so its value byte[] uses the UTF16 coder
    // (stored in the JVM's native byte order: little-endian on x86).
    String secretUtf16 = new StringBuilder("\u015c3cr3t-").append("\u03a9-\u0416q7").toString();
    char[] password = {'P', '4', 's', 's', 'w', '0', 'r', 'd', '!', 'Z', 'q', '8'};
    byte[] token = {(byte) 0xDE, (byte) 0xAD, (byte) 0xBE, (byte) 0xEF, (byte) 0x13, (byte) 0x37, (byte) 0xC0, (byte) 0xDE};
    long secretLong = 0x1122334455667788L;
    int secretInt = 0x5EC2E7AB;
    double secretDouble = 3.14159265358979e-7;
    Long boxedLong = Long.valueOf(0x0FEDCBA987654321L);

    void check() {
        // No string literals of the secrets here: they would add interned copies to the heap.
        System.err.println("secretDouble bits = " + Long.toHexString(Double.doubleToRawLongBits(secretDouble)));
    }
}
