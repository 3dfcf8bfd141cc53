package io.attnproof.ledger;

import io.attnproof.fixtures.json.JsonTrees;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Writes a {@link Ledger} as {@code index.html}, {@code ledger.md}, {@code ledger.json} and {@code pictures/*.svg}: one
 * writer per format ({@link HtmlLedger}, {@link MarkdownLedger}, {@link JsonLedger}) over the same model.
 */
public final class LedgerWriter {
    /** The margin rule, as the ledger states it. */
    public static final String MARGIN_RULE = "Margin: for upper-bound checks (value ≤ limit, e.g. max_abs_err)"
            + " limit ÷ value; for lower-bound checks (control_gap:* and other lines that must exceed their limit)"
            + " value ÷ limit; above 1× passes with room, below 1× fails. Exact checks (limit 0 or a value that must"
            + " equal its limit: bit counts, required counts) show \"exact\"; degeneracy lines and skips have none."
            + " The line shown per row is the failing one, else the measured line with the smallest margin.";

    private LedgerWriter() {
    }

    /** The files written. */
    public record Written(Path html, Path markdown, Path json, List<Path> pictures) {
    }

    /** Writes the ledger under {@code outDir} (created; stale pictures removed). */
    public static Written write(Ledger ledger, Path outDir) {
        try {
            Files.createDirectories(outDir);
            Path pictureDir = outDir.resolve("pictures");
            Files.createDirectories(pictureDir);
            try (DirectoryStream<Path> old = Files.newDirectoryStream(pictureDir, "*.svg")) {
                for (Path p : old) {
                    Files.delete(p);
                }
            }
            List<Path> pictures = new ArrayList<>();
            for (Pictures.Picture p : ledger.pictures()) {
                Path file = pictureDir.resolve(p.file());
                Files.writeString(file, p.svg(), StandardCharsets.UTF_8);
                pictures.add(file);
            }
            Path html = outDir.resolve("index.html");
            Path md = outDir.resolve("ledger.md");
            Path json = outDir.resolve("ledger.json");
            Files.writeString(html, HtmlLedger.ledger(ledger), StandardCharsets.UTF_8);
            Files.writeString(md, MarkdownLedger.ledger(ledger), StandardCharsets.UTF_8);
            Files.writeString(json, JsonTrees.writePretty(JsonLedger.ledger(ledger)), StandardCharsets.UTF_8);
            return new Written(html, md, json, List.copyOf(pictures));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the ledger under " + outDir, e);
        }
    }




}
