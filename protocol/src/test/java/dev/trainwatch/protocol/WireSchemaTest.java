package dev.trainwatch.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.github.victools.jsonschema.generator.Option;
import com.github.victools.jsonschema.generator.OptionPreset;
import com.github.victools.jsonschema.generator.SchemaGenerator;
import com.github.victools.jsonschema.generator.SchemaGeneratorConfigBuilder;
import com.github.victools.jsonschema.generator.SchemaVersion;
import com.github.victools.jsonschema.module.jackson.JacksonModule;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.io.IOException;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The wire records' contract, pinned: for each record that crosses the wire (agent → collector, scripts →
 * collector) a JSON Schema generated from the record ({@code src/main/resources/schema/NAME.schema.json}) and a
 * golden example with every field set ({@code src/test/resources/wire/NAME.json}). A renamed, retyped, added or
 * removed field fails here until both are regenerated on purpose:
 * {@code ./mvnw -B -q -pl protocol test -Dtest=WireSchemaTest -Dtrainwatch.regenerate=true}.
 */
class WireSchemaTest {
    private static final boolean REGENERATE = Boolean.getBoolean("trainwatch.regenerate");
    private static final Path SCHEMAS = Path.of("src/main/resources/schema");
    private static final Path GOLDEN = Path.of("src/test/resources/wire");
    private static final Map<String, Class<? extends Record>> RECORDS = Map.of(
            "agent-batch", AgentBatch.class, "step-event", StepEvent.class, "run-spec", RunSpec.class);

    @ParameterizedTest
    @ValueSource(strings = {"agent-batch", "step-event", "run-spec"})
    void theSchemaIsTheRecordsOwn(String name) throws IOException {
        String generated = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(schemaOf(RECORDS.get(name)))
                + "\n";
        Path file = SCHEMAS.resolve(name + ".schema.json");
        if (REGENERATE) {
            Files.createDirectories(SCHEMAS);
            Files.writeString(file, generated);
        }
        assertThat(Files.readString(file)).as(file + " (regenerate it if the change is meant)").isEqualTo(generated);
    }

    @ParameterizedTest
    @ValueSource(strings = {"agent-batch", "step-event", "run-spec"})
    void theGoldenExampleHasEveryFieldRoundTripsAndValidates(String name) throws Exception {
        Class<? extends Record> type = RECORDS.get(name);
        String example = Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(example(type, 0)) + "\n";
        Path file = GOLDEN.resolve(name + ".json");
        if (REGENERATE) {
            Files.createDirectories(GOLDEN);
            Files.writeString(file, example);
        }
        String golden = Files.readString(file, StandardCharsets.UTF_8);
        assertThat(golden).as(file + " (regenerate it if the change is meant)").isEqualTo(example);
        // Every field of every nested record is present in the golden file.
        assertThat(missingFields(type, Json.MAPPER.readTree(golden), "")).isEmpty();
        // It reads back into the same record.
        Record parsed = Json.MAPPER.readValue(golden, type);
        assertThat(Json.MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(parsed) + "\n").isEqualTo(golden);
        // And the committed schema accepts it, and refuses a wrong type for its first field.
        var schema = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012)
                .getSchema(Files.readString(SCHEMAS.resolve(name + ".schema.json")));
        Set<ValidationMessage> errors = schema.validate(Json.MAPPER.readTree(golden));
        assertThat(errors).isEmpty();
        ObjectNode broken = (ObjectNode) Json.MAPPER.readTree(golden);
        String first = broken.fieldNames().next();
        broken.set(first, Json.MAPPER.createArrayNode().add(Json.MAPPER.createObjectNode()));
        assertThat(schema.validate(broken)).as("a wrong type for " + first).isNotEmpty();
    }

    /** The JSON Schema (2020-12) of a record as the wire codec writes it: snake_case names, nulls left out. */
    static JsonNode schemaOf(Class<?> type) {
        SchemaGeneratorConfigBuilder config = new SchemaGeneratorConfigBuilder(Json.newMapper(),
                SchemaVersion.DRAFT_2020_12, OptionPreset.PLAIN_JSON)
                .with(new JacksonModule())
                .with(Option.DEFINITIONS_FOR_ALL_OBJECTS)
                .without(Option.SCHEMA_VERSION_INDICATOR);
        config.forFields().withPropertyNameOverrideResolver(
                field -> PropertyNamingStrategies.SnakeCaseStrategy.INSTANCE.translate(field.getDeclaredName()));
        config.forFields().withRequiredCheck(field -> field.getType().getErasedType().isPrimitive());
        return new SchemaGenerator(config.build()).generateSchema(type);
    }

    /** A record with every component set to a value of its type (strings name the field; nested records too). */
    static Object example(Type type, int depth) {
        Class<?> raw = type instanceof ParameterizedType p ? (Class<?>) p.getRawType() : (Class<?>) type;
        if (raw == String.class) {
            return "text";
        }
        if (raw == Long.class || raw == long.class) {
            return 42L;
        }
        if (raw == Integer.class || raw == int.class) {
            return 7;
        }
        if (raw == Double.class || raw == double.class) {
            return 1.5;
        }
        if (raw == Boolean.class || raw == boolean.class) {
            return true;
        }
        if (List.class.isAssignableFrom(raw)) {
            Type element = ((ParameterizedType) type).getActualTypeArguments()[0];
            List<Object> list = new ArrayList<>();
            list.add(example(element, depth + 1));
            return list;
        }
        if (Map.class.isAssignableFrom(raw)) {
            Map<String, Object> map = new LinkedHashMap<>();
            map.put("key", "value");
            return map;
        }
        if (raw.isRecord() && depth < 8) {
            RecordComponent[] components = raw.getRecordComponents();
            Object[] values = new Object[components.length];
            Class<?>[] types = new Class<?>[components.length];
            for (int i = 0; i < components.length; i++) {
                values[i] = example(components[i].getGenericType(), depth + 1);
                types[i] = components[i].getType();
            }
            try {
                var constructor = raw.getDeclaredConstructor(types);
                constructor.setAccessible(true);
                return constructor.newInstance(values);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot build an example " + raw.getSimpleName(), e);
            }
        }
        throw new IllegalStateException("no example value for " + type + ": add one to WireSchemaTest.example");
    }

    /** Record components (snake_case paths) that the JSON leaves out. */
    private static List<String> missingFields(Class<?> type, JsonNode json, String at) {
        List<String> missing = new ArrayList<>();
        if (!type.isRecord()) {
            return missing;
        }
        for (RecordComponent c : type.getRecordComponents()) {
            String name = PropertyNamingStrategies.SnakeCaseStrategy.INSTANCE.translate(c.getName());
            JsonNode value = json.get(name);
            if (value == null) {
                missing.add(at + name);
                continue;
            }
            Class<?> t = c.getType();
            if (List.class.isAssignableFrom(t) && value.isArray() && !value.isEmpty()) {
                Type element = ((ParameterizedType) c.getGenericType()).getActualTypeArguments()[0];
                if (element instanceof Class<?> e) {
                    missing.addAll(missingFields(e, value.get(0), at + name + "[0]."));
                }
            } else {
                missing.addAll(missingFields(t, value, at + name + "."));
            }
        }
        return missing;
    }
}
