from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("analyst", "0006_turn_enqueued_at"),
    ]

    operations = [
        # Files uploaded before this migration were placed (or silently not): call them ready.
        migrations.AddField(
            model_name="datafile",
            name="placement",
            field=models.CharField(
                choices=[("placing", "Placing"), ("ready", "Ready"), ("failed", "Failed")],
                default="ready",
                max_length=10,
            ),
        ),
        migrations.AlterField(
            model_name="datafile",
            name="placement",
            field=models.CharField(
                choices=[("placing", "Placing"), ("ready", "Ready"), ("failed", "Failed")],
                default="placing",
                max_length=10,
            ),
        ),
        migrations.AddField(
            model_name="datafile",
            name="placement_error",
            field=models.TextField(blank=True, default=""),
        ),
    ]
