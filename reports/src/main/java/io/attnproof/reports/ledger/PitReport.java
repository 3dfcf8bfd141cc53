package io.attnproof.reports.ledger;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.xml.stream.XMLInputFactory;
import javax.xml.stream.XMLStreamException;
import javax.xml.stream.XMLStreamReader;

/**
 * PIT's {@code mutations.xml} summarised: mutations, killed (PIT's "detected": KILLED, TIMED_OUT, MEMORY_ERROR,
 * RUN_ERROR), survived, no coverage; mutation score = killed ÷ mutations; test strength = killed ÷ (killed +
 * survived); and the surviving mutations (class:line mutator — description).
 */
public record PitReport(Path file, int mutations, int killed, int survived, int noCoverage, int timedOut,
        List<String> survivors) {

    /** killed ÷ mutations, NaN when there are none. */
    public double score() {
        return mutations == 0 ? Double.NaN : (double) killed / mutations;
    }

    /** killed ÷ (killed + survived), NaN when both are 0. */
    public double strength() {
        return killed + survived == 0 ? Double.NaN : (double) killed / (killed + survived);
    }

    /** "PIT: 900 mutations, 800 killed, 60 survived, 40 no coverage; mutation score 88.9%, test strength 93.0%". */
    public String summary() {
        return String.format(Locale.ROOT, "PIT: %d mutations, %d killed, %d survived, %d no coverage;"
                + " mutation score %s, test strength %s", mutations, killed, survived, noCoverage, pct(score()),
                pct(strength()));
    }

    static String pct(double x) {
        return Double.isNaN(x) ? "n/a" : String.format(Locale.ROOT, "%.1f%%", 100 * x);
    }

    /**
     * Reads {@code file}.
     *
     * @throws IllegalArgumentException naming the file for malformed XML
     * @throws IOException when it cannot be read
     */
    public static PitReport read(Path file) throws IOException {
        XMLInputFactory factory = XMLInputFactory.newFactory();
        factory.setProperty(XMLInputFactory.SUPPORT_DTD, false);
        factory.setProperty(XMLInputFactory.IS_SUPPORTING_EXTERNAL_ENTITIES, false);
        int mutations = 0;
        int killed = 0;
        int survived = 0;
        int noCoverage = 0;
        int timedOut = 0;
        List<String> survivors = new ArrayList<>();
        try (InputStream in = Files.newInputStream(file)) {
            XMLStreamReader xml = factory.createXMLStreamReader(in);
            String status = null;
            String clazz = "";
            String line = "";
            String mutator = "";
            String description = "";
            StringBuilder text = new StringBuilder();
            while (xml.hasNext()) {
                int event = xml.next();
                if (event == XMLStreamReader.START_ELEMENT) {
                    text.setLength(0);
                    if (xml.getLocalName().equals("mutation")) {
                        mutations++;
                        status = xml.getAttributeValue(null, "status");
                        String detected = xml.getAttributeValue(null, "detected");
                        if ("true".equals(detected)) {
                            killed++;
                        }
                        if ("TIMED_OUT".equals(status)) {
                            timedOut++;
                        }
                        clazz = "";
                        line = "";
                        mutator = "";
                        description = "";
                    }
                } else if (event == XMLStreamReader.CHARACTERS || event == XMLStreamReader.CDATA) {
                    text.append(xml.getText());
                } else if (event == XMLStreamReader.END_ELEMENT) {
                    switch (xml.getLocalName()) {
                        case "mutatedClass" -> clazz = text.toString().trim();
                        case "lineNumber" -> line = text.toString().trim();
                        case "mutator" -> mutator = text.toString().trim();
                        case "description" -> description = text.toString().trim();
                        case "mutation" -> {
                            if ("SURVIVED".equals(status)) {
                                survived++;
                                String shortMutator = mutator.substring(mutator.lastIndexOf('.') + 1);
                                survivors.add(clazz + ":" + line + " " + shortMutator + " — " + description);
                            } else if ("NO_COVERAGE".equals(status)) {
                                noCoverage++;
                            }
                        }
                        default -> { }
                    }
                }
            }
        } catch (XMLStreamException e) {
            throw new IllegalArgumentException(file + ": malformed XML: " + e.getMessage(), e);
        }
        return new PitReport(file, mutations, killed, survived, noCoverage, timedOut, List.copyOf(survivors));
    }
}
